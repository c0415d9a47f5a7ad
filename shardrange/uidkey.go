package shardrange

// UIDKey is the key whose owner handles the object of uid in a script partitioned by uid:
// Plan.KeyOwner places it on the owner of the uid's equal slice, whose uid partition caches
// the object.
func UIDKey(uid string) string { return uidPrefix + uid }

const uidPrefix = "uid:"
