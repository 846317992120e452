// Package monitoring holds nftproxy's Prometheus alert rules (alerts.yaml)
// and Grafana dashboard (dashboard.json), and lists every PromQL expression
// they use, for the tests that check them against the binary and against a
// real cluster's Prometheus.
//
// # Files
//
//   - alerts.yaml: the alert rules, a Prometheus rule file
//   - alerts_test.yaml: promtool's unit tests of those rules: every alert
//     firing on series named and labelled as a real scrape of the smoke
//     test's cluster has them, with made-up values
//   - scraped_test.yaml: the series the rules read as a real scrape of that
//     cluster gave them (hack/promcheck -series): no alert may fire
//   - dashboard.json: the Grafana dashboard (import it, or provision it)
//
// # Checks
//
// monitoring_test.go fails when a metric an expression names is not one the
// binary serves (renamed, or gone). hack/promcheck runs every expression
// against a Prometheus that scrapes a real cluster and fails on one that
// returns nothing (hack/test-node.sh does both, and promtool).
package monitoring

import (
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

//go:embed alerts.yaml dashboard.json
var files embed.FS

// Expression is one PromQL expression of the rules or the dashboard.
type Expression struct {
	// Source names it: "alert NAME", "panel TITLE (REFID)" or "variable NAME".
	Source string
	// Query is the expression as written (dashboard ones with Grafana's
	// variables still in).
	Query string
	// Signal is what must return data on a healthy cluster: an alert's
	// expression without its threshold; Query for the others.
	Signal string
	// Labels and Annotations are an alert rule's.
	Labels, Annotations map[string]string
}

type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Record      string            `json:"record"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// Rules returns the expressions of alerts.yaml, one per rule.
func Rules() ([]Expression, error) {
	data, err := files.ReadFile("alerts.yaml")
	if err != nil {
		return nil, err
	}
	var f ruleFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("alerts.yaml: %w", err)
	}
	var out []Expression
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			signal, _ := Threshold(r.Expr)
			name := "alert " + r.Alert
			if r.Alert == "" {
				name = "record " + r.Record
			}
			out = append(out, Expression{Source: name, Query: r.Expr, Signal: signal, Labels: r.Labels, Annotations: r.Annotations})
		}
	}
	return out, nil
}

type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// labelValues is Grafana's label_values(SELECTOR, LABEL) variable query.
var labelValues = regexp.MustCompile(`^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)

// Dashboard returns the expressions of dashboard.json: every panel's
// targets, and each query variable's label_values as the selector it wraps.
func Dashboard() ([]Expression, error) {
	data, err := files.ReadFile("dashboard.json")
	if err != nil {
		return nil, err
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("dashboard.json: %w", err)
	}
	var out []Expression
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, t := range p.Targets {
				src := fmt.Sprintf("panel %q (%s)", p.Title, t.RefID)
				out = append(out, Expression{Source: src, Query: t.Expr, Signal: t.Expr})
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, err := variableQuery(v.Query)
		if err != nil {
			return nil, fmt.Errorf("dashboard.json: variable %s: %w", v.Name, err)
		}
		m := labelValues.FindStringSubmatch(q)
		if m == nil {
			return nil, fmt.Errorf("dashboard.json: variable %s: %q is not label_values(SELECTOR, LABEL)", v.Name, q)
		}
		out = append(out, Expression{Source: "variable " + v.Name, Query: m[1], Signal: m[1]})
	}
	return out, nil
}

// variableQuery reads a variable's query: a string, or {"query": string}.
func variableQuery(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var o struct {
		Query string `json:"query"`
	}
	err := json.Unmarshal(raw, &o)
	return o.Query, err
}

// All returns the expressions of the rules and then of the dashboard.
func All() ([]Expression, error) {
	rules, err := Rules()
	if err != nil {
		return nil, err
	}
	dash, err := Dashboard()
	return append(rules, dash...), err
}

// Instantiate replaces the dashboard's Grafana variables with what makes the
// query a plain PromQL expression over every node: $__rate_interval with
// rate (a window of at least four scrapes), $node with ".*".
func Instantiate(query, rate string) string {
	return strings.NewReplacer("$__rate_interval", rate, "${__rate_interval}", rate,
		"$node", ".*", "${node}", ".*").Replace(query)
}
