package main

import (
	"fmt"
	"time"

	"github.com/nftproxy/nftproxy/deploy/monitoring"
)

// result is what one expression returned.
type result struct {
	expr    monitoring.Expression
	series  int
	firing  int
	problem error
}

// check runs every expression until each has data or wait passes, then
// prints one line each and fails if any has none.
func check(p prom, rate string, wait time.Duration) error {
	exprs, err := monitoring.All()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		results, empty := run(p, exprs, rate)
		if empty == 0 || time.Now().After(deadline) {
			report(results, rate)
			if empty > 0 {
				return fmt.Errorf("%d of %d expressions returned no data", empty, len(exprs))
			}
			return nil
		}
		time.Sleep(5 * time.Second)
	}
}

func run(p prom, exprs []monitoring.Expression, rate string) ([]result, int) {
	var out []result
	empty := 0
	for _, e := range exprs {
		r := result{expr: e}
		got, err := p.query(monitoring.Instantiate(e.Signal, rate))
		r.series, r.problem = len(got), err
		if err == nil && e.Signal != e.Query {
			whole, err := p.query(monitoring.Instantiate(e.Query, rate))
			r.firing, r.problem = len(whole), err
		}
		if r.series == 0 || r.problem != nil {
			empty++
		}
		out = append(out, r)
	}
	return out, empty
}

func report(results []result, rate string) {
	for _, r := range results {
		switch {
		case r.problem != nil:
			fmt.Printf("FAIL %s: %v\n", r.expr.Source, r.problem)
		case r.series == 0:
			fmt.Printf("FAIL %s: no data: %s\n", r.expr.Source, monitoring.Instantiate(r.expr.Signal, rate))
		case r.expr.Signal != r.expr.Query:
			fmt.Printf("ok   %s: %d series (rule matches %d)\n", r.expr.Source, r.series, r.firing)
		default:
			fmt.Printf("ok   %s: %d series\n", r.expr.Source, r.series)
		}
	}
}
