"""eq_webhook: the validating admission webhook for ElasticQuota and Pod objects.

A thin HTTPS edge: it keeps the cluster's ElasticQuota objects (and node capacity) from a watch,
turns AdmissionReview requests into calls of `eq_engine.decisions.verdicts`, and answers. It owns no
rule of its own. Never imports the operator or the CLI.
"""
