package kernel

import (
	"testing"

	"github.com/nftproxy/nftproxy/nft"
)

// BenchmarkAppendElements decodes element messages as a dump or an
// announcement of an endpoint map delivers them: 200 elements a message.
func BenchmarkAppendElements(b *testing.B) {
	var tc elementCase
	for _, c := range elementCases() {
		if c.name == "endpoint list map" {
			tc = c
		}
	}
	elems := make([]nft.Element, 200)
	for i := range elems {
		elems[i] = tc.elem
		elems[i].Key = append([]nft.Value(nil), tc.elem.Key...)
		elems[i].Key[3].Num = uint32(i)
	}
	var w batchWriter
	w.elements(newSetElemType, tc.f, &tc.set, elems)
	msg := batchPayloads(b, &w)[0]
	b.ReportAllocs()
	for b.Loop() {
		out, err := appendElements(nil, msg)
		if err != nil || len(out) != len(elems) {
			b.Fatalf("%d elements, %v", len(out), err)
		}
	}
}

// BenchmarkDecodeElement decodes an endpoint map's element against its set.
func BenchmarkDecodeElement(b *testing.B) {
	var tc elementCase
	for _, c := range elementCases() {
		if c.name == "endpoint list map" {
			tc = c
		}
	}
	var w batchWriter
	w.elements(newSetElemType, tc.f, &tc.set, []nft.Element{tc.elem})
	raw, err := appendElements(nil, batchPayloads(b, &w)[0])
	if err != nil || len(raw) != 1 {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		decodeElement(&tc.set, raw[0])
	}
}
