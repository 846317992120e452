package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The metrics both proxies serve under kube-proxy's names.
const (
	metricProgramming = "kubeproxy_network_programming_duration_seconds"
	metricSync        = "kubeproxy_sync_proxy_rules_duration_seconds"
)

// histogram is one Prometheus histogram as scraped: cumulative counts by
// upper bound, the sum and the count.
type histogram struct {
	buckets map[float64]float64 // le -> cumulative count
	sum     float64
	count   float64
}

// sub returns h - o: what was observed between two scrapes.
func (h histogram) sub(o histogram) histogram {
	out := histogram{buckets: map[float64]float64{}, sum: h.sum - o.sum, count: h.count - o.count}
	for le, c := range h.buckets {
		out.buckets[le] = c - o.buckets[le]
	}
	return out
}

// quantile estimates the q-quantile (0-1) as Prometheus'
// histogram_quantile does: linear interpolation inside the bucket that
// holds it. It also returns that bucket's upper bound, the figure the
// histogram can vouch for. NaN when nothing was observed.
func (h histogram) quantile(q float64) (est, bound float64) {
	if h.count == 0 {
		return math.NaN(), math.NaN()
	}
	les := make([]float64, 0, len(h.buckets))
	for le := range h.buckets {
		les = append(les, le)
	}
	sort.Float64s(les)
	rank := q * h.count
	lower, below := 0.0, 0.0
	for _, le := range les {
		c := h.buckets[le]
		if c >= rank {
			if math.IsInf(le, 1) {
				return lower, le
			}
			if c == below {
				return le, le
			}
			return lower + (le-lower)*(rank-below)/(c-below), le
		}
		lower, below = le, c
	}
	return lower, math.Inf(1)
}

// scrape is one read of a proxy's /metrics: the histograms we use.
type scrape map[string]histogram

// scraper reads a proxy's /metrics from inside its node namespace.
type scraper struct {
	client *http.Client
	url    string
}

func newScraper(n *node) *scraper {
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var c net.Conn
		err := n.ns.do(func() (err error) {
			var d net.Dialer
			c, err = d.DialContext(ctx, network, addr)
			return err
		})
		return c, err
	}
	tr := &http.Transport{DialContext: dial, DisableKeepAlives: true}
	return &scraper{client: &http.Client{Transport: tr, Timeout: 10 * time.Second}, url: "http://" + metricsAddr + "/metrics"}
}

func (s *scraper) get() (scrape, error) {
	resp, err := s.client.Get(s.url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", s.url, resp.Status)
	}
	return parseMetrics(resp.Body, metricProgramming, metricSync)
}

// parseMetrics reads the histograms named from the Prometheus text format.
func parseMetrics(r io.Reader, names ...string) (scrape, error) {
	out := scrape{}
	for _, n := range names {
		out[n] = histogram{buckets: map[float64]float64{}}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, n := range names {
			if strings.HasPrefix(line, n+"_") {
				if err := parseSample(out, n, line[len(n):]); err != nil {
					return nil, fmt.Errorf("%s: %w", line, err)
				}
			}
		}
	}
	return out, sc.Err()
}

// parseSample adds one line of histogram name to out: rest is the part
// after the name, e.g. `_bucket{ip_family="IPv4",le="0.25"} 3`. Series
// with other labels add up, as Prometheus' `sum by (le)` does: kube-proxy
// labels its histograms by IP family (it runs one proxier per family).
func parseSample(out scrape, name, rest string) error {
	i := strings.LastIndexByte(rest, ' ')
	if i < 0 {
		return fmt.Errorf("no value")
	}
	v, err := strconv.ParseFloat(rest[i+1:], 64)
	if err != nil {
		return err
	}
	series, labels, _ := strings.Cut(rest[:i], "{")
	h := out[name]
	switch series {
	case "_sum":
		h.sum += v
	case "_count":
		h.count += v
	case "_bucket":
		_, after, ok := strings.Cut(labels, `le="`)
		le, _, ok2 := strings.Cut(after, `"`)
		if !ok || !ok2 {
			return fmt.Errorf("bucket without le")
		}
		bound, err := strconv.ParseFloat(le, 64)
		if err != nil {
			return err
		}
		h.buckets[bound] += v
	}
	out[name] = h
	return nil
}
