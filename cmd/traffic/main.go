// Command traffic sends bounded streams of requests through Services and
// counts what a disruption loses; `make rollout` runs it (hack/rollout.sh)
// while it restarts, kills or replaces the service proxy.
//
//	traffic serve [-tcp :8080] [-udp :8081] [-echo :8082]
//	traffic load  [-tcp HOST:PORT] [-udp HOST:PORT] [-echo HOST:PORT] [-conns 8]
//	              [-rate 20] [-max 15m] [-stop FILE] [-out FILE]
//
// serve is the backend: on -tcp it answers every connection with its
// hostname and closes it, on -udp it answers every datagram with its
// hostname, and on -echo it echoes every line of a connection for as long
// as the client keeps it open.
//
// load is the client. Each of -tcp and -udp gets -rate requests a second,
// each with a deadline of a second: a TCP request is a new connection that
// must be answered, a UDP request one datagram that must be answered.
// -echo holds -conns connections open and sends a line on each every
// 200 ms; an error on an established connection (a reset, or no echo
// within a second) counts as a connection broken, and the connection is
// opened again. load stops when FILE (-stop) exists, or after -max, and
// writes its counts as one JSON object to -out (default stdout).
package main

import (
	"errors"
	"fmt"
	"os"
)

const usage = "usage: traffic serve|load [flags] (-h for flags)"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "traffic:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "serve":
		return runServe(args[1:])
	case "load":
		return runLoad(args[1:])
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}
