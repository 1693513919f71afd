{{/* Name of the chart, or nameOverride. */}}
{{- define "so.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Prefix of every resource name: <release>-<chart>, or the release name when it already contains the
chart name. At most 45 characters, so that with the longest suffix (-driver-manager) a name is still a
valid 63-character label. */}}
{{- define "so.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 45 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "so.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 45 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 45 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels every object gets. */}}
{{- define "so.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "so.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: spark-orchestrator
{{- end -}}

{{/* Labels that select this release's pods. */}}
{{- define "so.selectorLabels" -}}
app.kubernetes.io/name: {{ include "so.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The service's service account. */}}
{{- define "so.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "so.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The drivers' service account (the same name in every Spark namespace). */}}
{{- define "so.driverServiceAccountName" -}}
{{- default (printf "%s-driver" (include "so.fullname" .)) .Values.driver.serviceAccount.name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The Secret holding SECRET_KEY and MONGO_URL. */}}
{{- define "so.secretName" -}}
{{- default (include "so.fullname" .) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* The drivers' own namespace when spark.namespaces names none: <release>-drivers, apart from the release's
Secret (SECRET_KEY, MONGO_URL) and the service's pods. */}}
{{- define "so.defaultDriverNamespace" -}}
{{- printf "%s-drivers" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Spark namespaces as a JSON list (templates range over `include ... | fromJsonArray`). */}}
{{- define "so.sparkNamespaces" -}}
{{- $ns := .Values.spark.namespaces | default (list (include "so.defaultDriverNamespace" .)) -}}
{{- $ns | uniq | toJson -}}
{{- end -}}

{{/* The first Spark namespace: where drivers are created (K8S_NAMESPACE). */}}
{{- define "so.driverNamespace" -}}
{{- first (include "so.sparkNamespaces" . | fromJsonArray) -}}
{{- end -}}

{{/* image reference: repository:tag, tag defaulting to the chart's appVersion. */}}
{{- define "so.image" -}}
{{- $img := .image -}}
{{- printf "%s:%s" $img.repository (default .root.Chart.AppVersion ($img.tag | toString)) -}}
{{- end -}}

{{/* The volumes both Deployments mount: state (uploads, artifacts) and a writable /tmp. */}}
{{- define "so.volumes" -}}
- name: state
{{- if .Values.persistence.enabled }}
  persistentVolumeClaim:
    claimName: {{ default (printf "%s-state" (include "so.fullname" .)) .Values.persistence.existingClaim }}
{{- else }}
  emptyDir: {}
{{- end }}
- name: tmp
  emptyDir: {}
{{- end -}}

{{- define "so.volumeMounts" -}}
- name: state
  mountPath: {{ .Values.config.stateDir }}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* Environment of both components: the ConfigMap and the Secret. */}}
{{- define "so.envFrom" -}}
- configMapRef:
    name: {{ include "so.fullname" . }}
- secretRef:
    name: {{ include "so.secretName" . }}
{{- end -}}

{{/* Restarts pods when their configuration changes. */}}
{{- define "so.configChecksums" -}}
checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end -}}
