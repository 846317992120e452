package metrics

import (
	"fmt"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nftproxy/nftproxy/nft"
)

// PacketCount is what one counter object of a table has counted.
type PacketCount struct {
	Name    string
	Packets uint64
}

// CounterReader reads the counter objects of our table of family f, at
// scrape time (kernel.ReadCounters); a family without a table has none.
type CounterReader func(f nft.Family) ([]PacketCount, error)

// The metrics of the table's drop and reject counters, by the reason in
// the counter's name (nft.CounterReason) and ip_family.
var (
	droppedDesc = prometheus.NewDesc("nftproxy_packets_dropped_total",
		"Packets the proxy's rules dropped, by reason: new connections only", []string{"reason", "ip_family"}, nil)
	rejectedDesc = prometheus.NewDesc("nftproxy_packets_rejected_total",
		"Packets the proxy's rules rejected (answered with ICMP unreachable), by reason: new connections only",
		[]string{"reason", "ip_family"}, nil)
)

// counterCollector reads the counters when scraped: they live in the
// kernel, which counts every packet; copying them on a timer would only
// make them older.
type counterCollector struct {
	mu   sync.Mutex // one read at a time on the reader's netlink socket
	read CounterReader
}

var _ prometheus.Collector = (*counterCollector)(nil)

// CountPackets exports the drop and reject counters of the tables read by
// read, on every scrape.
func (m *Metrics) CountPackets(read CounterReader) {
	m.registry.MustRegister(&counterCollector{read: read})
}

func (c *counterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- droppedDesc
	ch <- rejectedDesc
}

func (c *counterCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range nft.Families {
		counts, err := c.read(f)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(droppedDesc, fmt.Errorf("read counters of table %s %s: %w", f, nft.TableName, err))
			continue
		}
		for _, pc := range counts {
			collectCount(ch, familyLabel(f), pc)
		}
	}
}

func collectCount(ch chan<- prometheus.Metric, family string, pc PacketCount) {
	verdict, reason, ok := nft.CounterReason(pc.Name)
	if !ok {
		return // somebody else's counter in our table
	}
	desc := droppedDesc
	if verdict == "reject" {
		desc = rejectedDesc
	}
	ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(pc.Packets), reason, family)
}

func familyLabel(f nft.Family) string {
	if f == nft.IPv6 {
		return IPv6
	}
	return IPv4
}
