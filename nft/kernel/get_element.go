package kernel

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/nftproxy/nftproxy/nft"
)

// GetElement asks the kernel for the one element of set s (its Name, Key
// types and, for a map, Data types) in family f's table whose key is key:
// what `nft get element` does, one small request whatever the size of the
// set. It reports false, with no error, when the table, the set or the
// element does not exist. For tools that wait for a table to be
// programmed (the agent benchmark); the sync path never needs it.
func (k *Kernel) GetElement(f nft.Family, s *nft.Set, key []nft.Value) (nft.Element, bool, error) {
	conn, err := k.dialDump()
	if err != nil {
		return nft.Element{}, false, err
	}
	defer conn.Close()
	req, err := elementRequest(s, key)
	if err != nil {
		return nft.Element{}, false, err
	}
	msgs, err := conn.Execute(netlink.Message{
		Header: netlink.Header{
			Type:  netlink.HeaderType(unix.NFNL_SUBSYS_NFTABLES<<8 | unix.NFT_MSG_GETSETELEM),
			Flags: netlink.Request | netlink.Acknowledge,
		},
		Data: append([]byte{byte(tableOf(f).Family), unix.NFNETLINK_V0, 0, 0}, req...),
	})
	if errors.Is(err, unix.ENOENT) {
		return nft.Element{}, false, nil
	}
	if err != nil {
		return nft.Element{}, false, fmt.Errorf("get element of %s: %w", s.Name, err)
	}
	for _, m := range msgs {
		elems, err := appendElements(nil, m.Data)
		if err != nil {
			return nft.Element{}, false, fmt.Errorf("get element of %s: decode: %w", s.Name, err)
		}
		if len(elems) > 0 {
			return decodeElement(s, elems[0]), true, nil
		}
	}
	return nft.Element{}, false, nil
}

// elementRequest is the attributes of a request for one element of s.
func elementRequest(s *nft.Set, key []nft.Value) ([]byte, error) {
	keyAttr, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: unix.NFTA_DATA_VALUE, Data: encodeKey(s.Key, key)}})
	if err != nil {
		return nil, err
	}
	elem, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: unix.NLA_F_NESTED | unix.NFTA_SET_ELEM_KEY, Data: keyAttr}})
	if err != nil {
		return nil, err
	}
	list, err := netlink.MarshalAttributes([]netlink.Attribute{
		{Type: unix.NLA_F_NESTED | unix.NFTA_LIST_ELEM, Data: elem}})
	if err != nil {
		return nil, err
	}
	return netlink.MarshalAttributes([]netlink.Attribute{
		{Type: unix.NFTA_SET_ELEM_LIST_TABLE, Data: []byte(nft.TableName + "\x00")},
		{Type: unix.NFTA_SET_ELEM_LIST_SET, Data: []byte(s.Name + "\x00")},
		{Type: unix.NLA_F_NESTED | unix.NFTA_SET_ELEM_LIST_ELEMENTS, Data: list},
	})
}
