{{/*
The objects' name: the release name unless fullnameOverride is set.
*/}}
{{- define "nftproxy.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The labels of every object, and the DaemonSet's selector (deploy/'s).
*/}}
{{- define "nftproxy.selectorLabels" -}}
app.kubernetes.io/name: {{ include "nftproxy.fullname" . }}
{{- end -}}

{{- define "nftproxy.serviceAccountName" -}}
{{- default (include "nftproxy.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/*
nftproxy.port ADDRESS: the port of an IP:port bind address.
*/}}
{{- define "nftproxy.port" -}}
{{- regexReplaceAll "^.*:" . "" -}}
{{- end -}}

{{/*
The healthz port the probes use: config.healthzBindAddress's, or
kube-proxy's default with a kube-proxy ConfigMap, whose file the chart does
not see.
*/}}
{{- define "nftproxy.healthzPort" -}}
{{- if .Values.kubeProxyConfigMap -}}
10256
{{- else -}}
{{- include "nftproxy.port" .Values.config.healthzBindAddress -}}
{{- end -}}
{{- end -}}

{{/*
Checks across values that the schema cannot express; each failure says
which values to change.
*/}}
{{- define "nftproxy.validate" -}}
{{- $m := .Values.metrics -}}
{{- if and $m.serviceMonitor.enabled (not $m.service.enabled) -}}
{{- fail "metrics.serviceMonitor.enabled needs metrics.service.enabled: the ServiceMonitor selects that Service" -}}
{{- end -}}
{{- if and $m.service.enabled (not .Values.kubeProxyConfigMap) -}}
{{- $addr := .Values.config.metricsBindAddress -}}
{{- if or (hasPrefix "127." $addr) (hasPrefix "[::1]" $addr) (hasPrefix "localhost" $addr) (eq $addr "") -}}
{{- fail (printf "metrics.service.enabled needs config.metricsBindAddress off loopback (it is %q): e.g. 0.0.0.0:%v" $addr $m.service.port) -}}
{{- end -}}
{{- if ne (include "nftproxy.port" $addr) (toString $m.service.port) -}}
{{- fail (printf "metrics.service.port %v is not the port of config.metricsBindAddress %q" $m.service.port $addr) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.rbac.create (not .Values.serviceAccount.create) (not .Values.serviceAccount.name) -}}
{{- fail "serviceAccount.create is false: set serviceAccount.name to the ServiceAccount the Pods run as" -}}
{{- end -}}
{{- end -}}
