package permissions

// StoreNeeds is what ctx.store (the runner's --store, package store) needs: its ConfigMaps in
// namespace, "" for the runner's own. Reads are get and list (a list by prefix reads every
// shard of the script at once); writes create a shard's ConfigMap and update it, each update
// carrying the resourceVersion it read; delete removes the store of a script gone for
// --store-retention. Names are not known in advance (one set per script), and create cannot
// be limited by name anyway, so nothing is limited to names.
func StoreNeeds(namespace string) []Need {
	var out []Need
	for _, verb := range []string{"create", "delete", "get", "list", "update"} {
		out = append(out, Need{Script: "(--store)", Resource: "configmaps", Verb: verb,
			Namespace: namespace, Own: namespace == "", Why: "ctx.store: the scripts' stores (delete: after --store-retention)"})
	}
	return out
}
