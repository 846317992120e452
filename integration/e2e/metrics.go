package e2e

import (
	"bufio"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MetricsAddr is where StartProxy's nftproxy serves metrics when started
// with MetricsArg, on the node namespace's loopback.
const MetricsAddr = "127.0.0.1:10249"

// MetricsArg is the flag that serves nftproxy's metrics on MetricsAddr.
const MetricsArg = "--metrics-bind-address=" + MetricsAddr

// Metric reads one unlabelled metric (a counter or a gauge) from the
// nftproxy running in the node namespace with MetricsArg.
func (e *Env) Metric(name string) (float64, error) {
	client := http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: e.Lab.Node.DialContext}}
	resp, err := client.Get("http://" + MetricsAddr + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("scrape: %w", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("metric %s not found", name)
}
