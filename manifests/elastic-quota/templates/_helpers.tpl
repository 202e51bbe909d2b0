{{/* Names: every object is "<release>-<component>", cut to 63 characters. */}}
{{- define "eq.name" -}}
{{- printf "%s-%s" .root.Release.Name .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "eq.quotaNamespace" -}}
{{- .Values.quota.namespace | default .Release.Namespace -}}
{{- end -}}

{{- define "eq.selector" -}}
app.kubernetes.io/name: elastic-quota
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "eq.labels" -}}
{{ include "eq.selector" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "eq.image" -}}
{{- $missing := "image.repository is required: no elastic-quota image is published; build and push one (see the README's quick start) and set image.repository=REGISTRY/elastic-quota" -}}
{{ required $missing .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The operator's service account as the API server names it in admission requests. */}}
{{- define "eq.operatorUser" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "eq.name" (dict "root" . "component" "operator") }}
{{- end -}}

{{/* RES=QTY[,RES=QTY...], the flags' form of a resource list. */}}
{{- define "eq.resourceList" -}}
{{- $pairs := list -}}
{{- range $name, $quantity := . -}}
{{- $pairs = append $pairs (printf "%s=%v" $name $quantity) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}

{{/* The system group's namespaces: the configured ones, and always the release's and the
built-in groups' own, so that the product never gates, evicts or denies its own pods. */}}
{{- define "eq.systemNamespaces" -}}
{{- toYaml (uniq (concat .Values.quota.systemNamespaces (list .Release.Namespace (include "eq.quotaNamespace" .)))) -}}
{{- end -}}

{{/* Settings both processes share: the quota groups and logging. */}}
{{- define "eq.sharedEnv" -}}
- name: ELASTIC_QUOTA_NAMESPACE
  value: {{ include "eq.quotaNamespace" . | quote }}
- name: ELASTIC_QUOTA_ROOT_NAME
  value: {{ .Values.quota.rootName | quote }}
- name: ELASTIC_QUOTA_SYSTEM_NAME
  value: {{ .Values.quota.systemName | quote }}
- name: ELASTIC_QUOTA_DEFAULT_NAME
  value: {{ .Values.quota.defaultName | quote }}
- name: ELASTIC_QUOTA_SYSTEM_NAMESPACES
  value: {{ include "eq.systemNamespaces" . | fromYamlArray | join "," | quote }}
- name: ELASTIC_QUOTA_DEFAULT_MIN
  value: {{ include "eq.resourceList" .Values.quota.defaultMin | quote }}
- name: ELASTIC_QUOTA_DEFAULT_MAX
  value: {{ include "eq.resourceList" .Values.quota.defaultMax | quote }}
- name: ELASTIC_QUOTA_LOG_LEVEL
  value: {{ .Values.logging.level | quote }}
- name: ELASTIC_QUOTA_LOG_FORMAT
  value: {{ .Values.logging.format | quote }}
{{- end -}}

{{- define "eq.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- end -}}

{{- define "eq.probes" -}}
livenessProbe:
  httpGet: {path: /healthz, port: probes}
  periodSeconds: 10
  failureThreshold: 3
readinessProbe:
  httpGet: {path: /readyz, port: probes}
  periodSeconds: 5
{{- end -}}

{{/* A Deployment's pod template up to its containers: labels, service account, security and
scheduling; `settings` is .Values.operator or .Values.webhook. */}}
{{- define "eq.podTemplateHead" -}}
metadata:
  labels:
    {{- include "eq.labels" . | nindent 4 }}
    {{- with .settings.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with .settings.podAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  serviceAccountName: {{ include "eq.name" . }}
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    seccompProfile:
      type: RuntimeDefault
  {{- with .settings.priorityClassName }}
  priorityClassName: {{ . }}
  {{- end }}
  {{- with .settings.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .settings.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  affinity:
  {{- if .settings.affinity }}
    {{- toYaml .settings.affinity | nindent 4 }}
  {{- else }}
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
        - weight: 100
          podAffinityTerm:
            topologyKey: kubernetes.io/hostname
            labelSelector:
              matchLabels:
                {{- include "eq.selector" . | nindent 16 }}
  {{- end }}
  {{- with .root.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
