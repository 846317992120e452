package nft

// MatchFibLocal matches packets whose source address is one of the node's
// own (`fib saddr type local`): traffic the node itself sends.
type MatchFibLocal struct{}

func (MatchFibLocal) text(Family) string { return "fib saddr type local" }
