package metrics

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/component-base/metrics/legacyregistry"

	// client-go's request metrics (rest_client_requests_total,
	// rest_client_request_duration_seconds, ...), registered in
	// component-base's global registry as kube-proxy registers them:
	// dashboards of kube-proxy plot API request rates and latencies.
	_ "k8s.io/component-base/metrics/prometheus/restclient"
)

// Handler serves /metrics and, as kube-proxy's metrics server does, a plain
// /healthz that answers "ok" while the process serves HTTP. /metrics holds
// our registry and client-go's rest_client_* metrics.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	gatherers := prometheus.Gatherers{m.registry, prefixed{legacyregistry.DefaultGatherer, "rest_client_"}}
	mux.Handle("/metrics", promhttp.HandlerFor(gatherers, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "ok")
	})
	return mux
}

// prefixed gathers the families of g whose names start with prefix: the
// global registry also holds Go and process collectors, which ours has.
type prefixed struct {
	g      prometheus.Gatherer
	prefix string
}

func (p prefixed) Gather() ([]*dto.MetricFamily, error) {
	all, err := p.g.Gather()
	var out []*dto.MetricFamily
	for _, f := range all {
		if strings.HasPrefix(f.GetName(), p.prefix) {
			out = append(out, f)
		}
	}
	return out, err
}
