// Command promcheck runs every PromQL expression of nftproxy's alert rules
// and dashboard (deploy/monitoring) against a Prometheus that scrapes a real
// cluster, and fails when one returns no data. For an alert it runs the
// signal (the expression without its threshold), which must have data on a
// healthy cluster, and reports how many series the whole rule matches
// (firing). Dashboard queries run with $node as ".*" and $__rate_interval
// as -rate. It retries until every expression has data or -wait passes.
//
//	go run ./hack/promcheck -url http://127.0.0.1:9090 [-rate 1m] [-wait 2m]
//	go run ./hack/promcheck -url ... -series OUT.yaml -range 2m -step 5s
//
// With -series it instead writes the series the alert rules read, as
// scraped over the last -range, as promtool input_series: a promtool test
// file (rule_files: -rules) that expects no alert at the end of the window,
// which is what a healthy cluster must give.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:9090", "Prometheus's address")
	rate := flag.String("rate", "1m", "what $__rate_interval becomes")
	wait := flag.Duration("wait", 2*time.Minute, "how long to retry expressions without data")
	series := flag.String("series", "", "write the rules' input series as a promtool test file here")
	window := flag.Duration("range", 2*time.Minute, "with -series: the window of samples")
	step := flag.Duration("step", 5*time.Second, "with -series: the sample interval")
	rules := flag.String("rules", "deploy/monitoring/alerts.yaml", "with -series: the rule file the test loads")
	flag.Parse()
	p := prom{base: *base, client: &http.Client{Timeout: 20 * time.Second}}
	var err error
	if *series != "" {
		err = writeSeries(p, *series, *rules, *window, *step)
	} else {
		err = check(p, *rate, *wait)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "promcheck:", err)
		os.Exit(1)
	}
}

// prom is a client of Prometheus's HTTP API.
type prom struct {
	base   string
	client *http.Client
}

// sample is one series of an instant vector, or of a matrix.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
	Values [][]any           `json:"values"`
}

type response struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

// get calls an API path with the query's parameters and returns its result:
// the series of a vector or matrix (a scalar counts as one series).
func (p prom) get(path string, params url.Values) ([]sample, error) {
	resp, err := p.client.Get(p.base + path + "?" + params.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s %s: %s", path, params.Get("query"), r.Error)
	}
	if r.Data.ResultType == "scalar" || r.Data.ResultType == "string" {
		return []sample{{}}, nil
	}
	var out []sample
	err = json.Unmarshal(r.Data.Result, &out)
	return out, err
}

func (p prom) query(q string) ([]sample, error) {
	return p.get("/api/v1/query", url.Values{"query": {q}})
}
