package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// deadline bounds every request and every echo.
const deadline = time.Second

// echoEvery is how often a long-lived connection sends a line.
const echoEvery = 200 * time.Millisecond

func runLoad(args []string) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	tcp := fs.String("tcp", "", "HOST:PORT answered per connection (serve -tcp)")
	udp := fs.String("udp", "", "HOST:PORT answered per datagram (serve -udp)")
	echo := fs.String("echo", "", "HOST:PORT echoing lines (serve -echo)")
	conns := fs.Int("conns", 8, "long-lived connections to -echo")
	rate := fs.Int("rate", 20, "requests a second to each of -tcp and -udp")
	max := fs.Duration("max", 15*time.Minute, "stop after this long at most")
	stop := fs.String("stop", "", "stop once this file exists")
	out := fs.String("out", "", "write the counts here (default stdout)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rate < 1 || *rate > 1000 || *conns < 0 || *conns > 1000 {
		return errors.New("-rate must be 1 to 1000 and -conns 0 to 1000")
	}
	l := load{tcp: *tcp, udp: *udp, echo: *echo, conns: *conns, rate: *rate}
	r := l.run(stopWhen(*stop, *max))
	w := io.Writer(os.Stdout)
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// stopWhen is closed once file exists (polled every 100 ms) or after max.
func stopWhen(file string, max time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		end := time.Now().Add(max)
		for time.Now().Before(end) {
			if file != "" {
				if _, err := os.Stat(file); err == nil {
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	return done
}

type load struct {
	tcp, udp, echo string
	conns, rate    int
}

// Result is what load writes.
type Result struct {
	Seconds float64 `json:"seconds"`
	TCP     *Stream `json:"tcp,omitempty"`
	UDP     *Stream `json:"udp,omitempty"`
	Echo    *Stream `json:"echo,omitempty"`
}

func (l load) run(stop <-chan struct{}) Result {
	start := time.Now()
	var r Result
	var wg sync.WaitGroup
	if l.tcp != "" {
		r.TCP = &Stream{}
		wg.Add(1)
		go func() { defer wg.Done(); every(stop, l.rate, r.TCP, func() error { return tcpRequest(l.tcp) }) }()
	}
	if l.udp != "" {
		r.UDP = &Stream{}
		wg.Add(1)
		go func() { defer wg.Done(); every(stop, l.rate, r.UDP, func() error { return udpRequest(l.udp) }) }()
	}
	if l.echo != "" && l.conns > 0 {
		r.Echo = &Stream{}
		for i := 0; i < l.conns; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); hold(stop, l.echo, r.Echo) }()
		}
	}
	wg.Wait()
	r.Seconds = time.Since(start).Seconds()
	return r
}

// every runs one request per 1/rate s, each in its own goroutine, until stop.
func every(stop <-chan struct{}, rate int, s *Stream, request func() error) {
	t := time.NewTicker(time.Second / time.Duration(rate))
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			wg.Add(1)
			go func() { defer wg.Done(); s.record(request()) }()
		}
	}
}

func tcpRequest(addr string) error {
	c, err := net.DialTimeout("tcp", addr, deadline)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(deadline))
	_, err = bufio.NewReader(c).ReadString('\n')
	return err
}

func udpRequest(addr string) error {
	c, err := net.Dial("udp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(deadline))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return err
	}
	_, err = c.Read(make([]byte, 1500))
	return err
}

// hold keeps one connection to addr open until stop, sending a line every
// echoEvery. Opening counts as a request (Sent, Failed); an error once it
// is open counts as a broken connection, and it is opened again.
func hold(stop <-chan struct{}, addr string, s *Stream) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		c, err := net.DialTimeout("tcp", addr, deadline)
		s.record(err)
		if err != nil {
			time.Sleep(echoEvery)
			continue
		}
		err = echoUntil(stop, c)
		c.Close()
		if err == nil {
			return
		}
		s.broke(err)
	}
}

func echoUntil(stop <-chan struct{}, c net.Conn) error {
	r := bufio.NewReader(c)
	t := time.NewTicker(echoEvery)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-stop:
			return nil
		case <-t.C:
		}
		c.SetDeadline(time.Now().Add(deadline))
		line := fmt.Sprintf("%d\n", n)
		if _, err := c.Write([]byte(line)); err != nil {
			return err
		}
		got, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if got != line {
			return fmt.Errorf("echo: got %q, want %q", got, line)
		}
	}
}
