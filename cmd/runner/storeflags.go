package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/jsinformer/jsinformer/store"
)

// storeFlags are the flags of ctx.store (package store): where its ConfigMaps are and the
// limits of one script's store.
type storeFlags struct {
	enabled   bool
	namespace string
	opts      store.Options
	opened    *store.Options // the engine's Config.Store, made by check; nil without --store
}

// check validates the flags and sets opened.
func (s *storeFlags) check(dryRun bool) error {
	var err error
	s.opened, err = s.options(dryRun)
	return err
}

func (s *storeFlags) add(f *pflag.FlagSet) {
	f.BoolVar(&s.enabled, "store", false, "give scripts ctx.store, a key-value store per script kept in ConfigMaps of --store-namespace (docs/store.md); without it ctx.store throws")
	f.StringVar(&s.namespace, "store-namespace", "", "namespace of the store's ConfigMaps (default: the pod's namespace in a cluster, else default)")
	f.IntVar(&s.opts.Shards, "store-shards", store.DefaultShards, "ConfigMaps per script the keys are spread over; changing it on a store holding data hides the keys that move")
	f.DurationVar(&s.opts.Window, "store-write-window", store.DefaultWindow, "least time between two updates of one of the store's ConfigMaps: writes meanwhile wait and go in one update; a write to a ConfigMap idle that long goes at once")
	f.IntVar(&s.opts.Limits.MaxKeyBytes, "store-max-key-bytes", store.DefaultMaxKeyBytes, "largest key, in bytes")
	f.IntVar(&s.opts.Limits.MaxValueBytes, "store-max-value-bytes", store.DefaultMaxValueBytes, "largest value, in bytes of JSON")
	f.IntVar(&s.opts.Limits.MaxKeys, "store-max-keys", store.DefaultMaxKeys, "most keys one script may store")
	f.DurationVar(&s.opts.Retention, "store-retention", store.DefaultRetention, "how long the store of a deleted script (or of a shared namespace no script declares) is kept before it is deleted; 0 keeps it until `runner store delete`")
	f.IntVar(&s.opts.Limits.MaxTotalBytes, "store-max-total-bytes", store.DefaultMaxTotalBytes, "most bytes (keys plus values) one script may store")
}

// options is the engine's Config.Store: nil without --store. The store cannot be combined
// with the runner's --dry-run (dryRun): its writes are real.
func (s *storeFlags) options(dryRun bool) (*store.Options, error) {
	if !s.enabled {
		return nil, nil
	}
	if dryRun {
		return nil, errors.New("--store and --dry-run cannot be used together: the store's writes are real writes to ConfigMaps")
	}
	l := s.opts.Limits
	if s.opts.Shards <= 0 || s.opts.Window <= 0 || l.MaxKeyBytes <= 0 || l.MaxValueBytes <= 0 || l.MaxKeys <= 0 || l.MaxTotalBytes <= 0 || s.opts.Retention < 0 {
		return nil, errors.New("--store-shards, --store-write-window and the --store-max-* limits must be positive, --store-retention not negative")
	}
	opts := s.opts
	opts.Namespace = s.namespace
	if opts.Namespace == "" {
		opts.Namespace = podNamespace()
	}
	return &opts, nil
}
