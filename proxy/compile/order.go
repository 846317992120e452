package compile

import "github.com/nftproxy/nftproxy/proxy/model"

// order is each Service's position in the latest snapshot: the first
// Service in the snapshot wins a key that several claim.
type order struct {
	pos map[string]int
	n   int // Services in the snapshot
}

type nsName struct{ namespace, name string }

func orderOf(snap *model.Snapshot) order {
	o := order{pos: make(map[string]int, len(snap.Services)), n: len(snap.Services)}
	for i := range snap.Services {
		key := snap.Services[i].Key()
		if _, dup := o.pos[key]; !dup {
			o.pos[key] = i
		}
	}
	return o
}

// update moves o to snap, in which only the Services named in changed
// differ from the snapshot o was made from. A sync after endpoint changes
// has the same Services at the same positions: when every changed Service
// is still where o has it, and the number is the same, o holds as it is,
// found without looking at the other Services (building o again costs
// time in proportion to the cluster, every sync).
func (o *order) update(snap *model.Snapshot, changed map[string]bool) {
	if len(snap.Services) == o.n {
		same := true
		for key := range changed {
			pos, ok := o.pos[key]
			if !ok || !isKey(&snap.Services[pos], key) {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	*o = orderOf(snap)
}

// isKey reports whether svc is the Service "namespace/name" key names.
func isKey(svc *model.Service, key string) bool {
	return len(key) == len(svc.Namespace)+1+len(svc.Name) && key[:len(svc.Namespace)] == svc.Namespace &&
		key[len(svc.Namespace)] == '/' && key[len(svc.Namespace)+1:] == svc.Name
}

// of returns key's position, false when snap has no such Service.
func (o *order) of(key string) (int, bool) {
	pos, ok := o.pos[key]
	return pos, ok
}
