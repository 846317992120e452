package main

import (
	"testing"
	"time"
)

// stopAfter is a stop channel closed after d, and after then() has run
// half-way through.
func stopAfter(d time.Duration, then func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		time.Sleep(d / 2)
		then()
		time.Sleep(d / 2)
		close(done)
	}()
	return done
}

func TestLoadCountsNothingLostWhileTheServerRuns(t *testing.T) {
	s, err := listen("127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	go s.Serve()
	l := load{tcp: s.tcp.Addr().String(), udp: s.udp.LocalAddr().String(), echo: s.echo.Addr().String(), conns: 2, rate: 50}
	r := l.run(stopAfter(time.Second, func() {}))
	for name, st := range map[string]*Stream{"tcp": r.TCP, "udp": r.UDP, "echo": r.Echo} {
		if st.Sent == 0 || st.Failed != 0 || st.Broken != 0 {
			t.Errorf("%s: sent %d, failed %d, broken %d (%v); want some sent and nothing lost", name, st.Sent, st.Failed, st.Broken, st.Errors)
		}
	}
}

func TestLoadCountsWhatAStoppedServerLoses(t *testing.T) {
	s, err := listen("127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	l := load{tcp: s.tcp.Addr().String(), udp: s.udp.LocalAddr().String(), echo: s.echo.Addr().String(), conns: 2, rate: 50}
	// Closing the listeners refuses new requests; the open echo connections
	// are closed by their handlers only when they fail, so close them too.
	r := l.run(stopAfter(2*time.Second, func() { s.Close(); s.closeConns() }))
	if r.TCP.Failed == 0 || r.UDP.Failed == 0 {
		t.Errorf("tcp failed %d, udp failed %d: want failures after the server stopped", r.TCP.Failed, r.UDP.Failed)
	}
	if r.Echo.Broken != 2 {
		t.Errorf("echo broken %d (%v), want 2: both held connections lost their server", r.Echo.Broken, r.Echo.Errors)
	}
}
