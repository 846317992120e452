package nft

// Applier commits plans: all of a plan's operations or none of them.
type Applier interface {
	Apply(p *Plan) error
}

// Reader reads back the tables nftproxy owns, as they are now.
type Reader interface {
	Read() (Ruleset, error)
}

// NextGeneration is the generation that follows gen: the one a transaction
// committed at gen produces. The kernel's counter skips 0 when it wraps.
func NextGeneration(gen uint32) uint32 {
	if gen++; gen == 0 {
		return 1
	}
	return gen
}
