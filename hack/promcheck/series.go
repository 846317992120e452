package main

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/nftproxy/nftproxy/deploy/monitoring"
)

// The promtool test file's shape (promtool test rules).
type testFile struct {
	RuleFiles          []string   `json:"rule_files"`
	EvaluationInterval string     `json:"evaluation_interval"`
	Tests              []testCase `json:"tests"`
}

type testCase struct {
	Name          string        `json:"name"`
	Interval      string        `json:"interval"`
	InputSeries   []inputSeries `json:"input_series"`
	AlertRuleTest []alertTest   `json:"alert_rule_test"`
}

type inputSeries struct {
	Series string `json:"series"`
	Values string `json:"values"`
}

type alertTest struct {
	EvalTime  string `json:"eval_time"`
	Alertname string `json:"alertname"`
	ExpAlerts []any  `json:"exp_alerts"`
}

// writeSeries writes a promtool test of the rules over the series they read,
// as Prometheus scraped them over the last window: no alert may fire at its
// end.
func writeSeries(p prom, out, rules string, window, step time.Duration) error {
	exprs, err := monitoring.Rules()
	if err != nil {
		return err
	}
	var names, alerts []string
	for _, e := range exprs {
		n, err := monitoring.MetricNames(e.Query)
		if err != nil {
			return err
		}
		names = append(names, n...)
		alerts = append(alerts, strings.TrimPrefix(e.Source, "alert "))
	}
	slices.Sort(names)
	end := time.Now().Truncate(step)
	start := end.Add(-window)
	var input []inputSeries
	for _, n := range slices.Compact(names) {
		got, err := p.get("/api/v1/query_range", url.Values{
			"query": {fmt.Sprintf("{__name__=%q}", n)},
			"start": {unix(start)}, "end": {unix(end)}, "step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
		})
		if err != nil {
			return err
		}
		if len(got) == 0 {
			return fmt.Errorf("no samples of %s in the last %s", n, window)
		}
		for _, s := range got {
			input = append(input, inputSeries{Series: seriesName(s.Metric), Values: values(s.Values, start, end, step)})
		}
	}
	abs, err := filepath.Abs(rules)
	if err != nil {
		return err
	}
	tc := testCase{Name: fmt.Sprintf("%d series as scraped over %s: no alert", len(input), window),
		Interval: step.String(), InputSeries: input}
	for _, a := range alerts {
		tc.AlertRuleTest = append(tc.AlertRuleTest, alertTest{EvalTime: window.String(), Alertname: a, ExpAlerts: []any{}})
	}
	data, err := yaml.Marshal(testFile{RuleFiles: []string{abs}, EvaluationInterval: step.String(), Tests: []testCase{tc}})
	if err != nil {
		return err
	}
	head := fmt.Sprintf("# Written by hack/promcheck -series from a real cluster's Prometheus, %s.\n", end.UTC().Format(time.RFC3339))
	return os.WriteFile(out, append([]byte(head), data...), 0o644)
}

func unix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// seriesName writes a series in PromQL's notation: name{label="value",...}.
func seriesName(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(m[k])
	}
	return m["__name__"] + "{" + strings.Join(parts, ",") + "}"
}

// values writes a range result as promtool values, one per step from start
// to end, "_" where the series had no sample.
func values(points [][]any, start, end time.Time, step time.Duration) string {
	at := map[int64]string{}
	for _, pt := range points {
		if len(pt) != 2 {
			continue
		}
		ts, _ := pt[0].(float64)
		v, _ := pt[1].(string)
		if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsNaN(f) {
			at[int64(math.Round(ts))] = strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	var out []string
	for t := start; !t.After(end); t = t.Add(step) {
		v, ok := at[t.Unix()]
		if !ok {
			v = "_"
		}
		out = append(out, v)
	}
	return strings.Join(out, " ")
}
