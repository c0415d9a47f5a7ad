package plugins

// Source is one script file's content as read after the debounce.
type Source struct {
	Name    string // path relative to the scripts folder, slash-separated: "01-log.js", "team/a.ts"
	Path    string // absolute path that was read
	Content []byte
	// Hash is the version shown in logs: the first 12 hex digits of the content's SHA-256, or,
	// for a plugin that imports modules, of that and of every module's name and content.
	Hash string
	// Modules are the files the plugin bundles besides itself (see Options.Imports), sorted.
	Modules []string
	// Settling is set on a Loaded event after the initial scan: the content was read moments
	// after it changed and may be a save in progress, so a Settled event for this Name and
	// Hash follows once it has stayed unchanged for Options.Grace, unless a Loaded or Removed
	// event for Name comes first.
	Settling bool
}

// EventKind says what happened to a plugin.
type EventKind int

const (
	// Loaded means a new file, or a file whose content hash changed.
	Loaded EventKind = iota + 1
	// Removed means the file is gone (deleted, renamed away, moved out, or no longer a script).
	Removed
	// Synced means the initial scan has been delivered; sent once, after the first scan's events.
	Synced
	// Settled means the content of a Settling Loaded event (Source.Name and Source.Hash only)
	// has stayed unchanged for Options.Grace: it is not a save in progress.
	Settled
)

// Event is one change to the scripts folder, delivered in order on the watcher's goroutine.
type Event struct {
	Kind   EventKind
	Source Source // for Removed only Name is set, for Settled Name and Hash; empty for Synced
}
