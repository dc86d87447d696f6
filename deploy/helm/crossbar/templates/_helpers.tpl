{{/* Names: <release>-crossbar, cut to the 63 characters Kubernetes allows. */}}
{{- define "crossbar.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "crossbar.natsName" -}}
{{- printf "%s-nats" (include "crossbar.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels besides the selector's, on everything the chart makes. */}}
{{- define "crossbar.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/part-of: crossbar
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}

{{- define "crossbar.selectorLabels" -}}
app.kubernetes.io/name: crossbar
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "crossbar.natsSelectorLabels" -}}
app.kubernetes.io/name: nats
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The URL of the bundled NATS: its client Service; the relays learn the other servers from it. */}}
{{- define "crossbar.natsUrl" -}}
{{- printf "nats://%s:4222" (include "crossbar.natsName" .) -}}
{{- end -}}

{{/* The configuration file: the values' config, with the keys the chart owns checked and filled in. */}}
{{- define "crossbar.config" -}}
{{- $config := deepCopy (.Values.config | default dict) -}}
{{- if hasKey $config "listen" -}}
{{- fail "config.listen: set containerPort instead (the chart sets CROSSBAR_LISTEN from it, which would win over the file)" -}}
{{- end -}}
{{- if .Values.nats.enabled -}}
{{- if hasKey $config "nats" -}}
{{- fail "config.nats: with nats.enabled the chart points the relays at its own NATS; set one or the other" -}}
{{- end -}}
{{- $_ := set $config "nats" (include "crossbar.natsUrl" .) -}}
{{- end -}}
{{- if regexMatch "^(127\\.|localhost:|\\[::1\\]:)" (toString (index $config "admin-listen" | default "")) -}}
{{- fail "config.admin-listen: a loopback address cannot be probed by the kubelet nor scraped; use 0.0.0.0:<port> and a NetworkPolicy" -}}
{{- end -}}
{{- if and (gt (int .Values.replicaCount) 1) (not (hasKey $config "nats")) -}}
{{- fail "replicaCount > 1 needs the cluster link: nats.enabled, or a nats URL in config; relays without it would each serve only their own clients" -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}

{{/* True (non-empty) when the relays have a cluster link, whose loss /healthz also reports. */}}
{{- define "crossbar.clustered" -}}
{{- if or .Values.nats.enabled (hasKey (.Values.config | default dict) "nats") -}}true{{- end -}}
{{- end -}}

{{/* Where /healthz is served: the admin-listen port if there is one, else the main one. */}}
{{- define "crossbar.adminPort" -}}
{{- with (.Values.config | default dict) -}}
{{- with (index . "admin-listen") -}}
{{- regexFind "[0-9]+$" (toString .) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "crossbar.healthPort" -}}
{{- if include "crossbar.adminPort" . -}}admin{{- else -}}http{{- end -}}
{{- end -}}
