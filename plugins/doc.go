// Package plugins turns a scripts folder into an ordered stream of plugin
// versions. A plugin is one script file; this package finds, watches and reads
// those files and knows nothing of JavaScript or informers: compiling and
// validating what it hands over is the engine's job.
//
// # Goroutines and ownership
//
// [Watcher.Run] owns everything it creates (the fsnotify watcher, the debounce
// timer, the record of what it emitted) and releases it all before returning.
// emit is called on Run's goroutine only, one event at a time, so a slow emit
// delays the next rescan but never races with it. Run returns nil when its
// context is done, after finishing the batch of events in progress. An
// [Event]'s Source.Content belongs to the receiver: Run never touches it again.
//
// # Ordering
//
// Run first emits a Loaded event for every script found by the initial scan,
// sorted by Name, then exactly one Synced event (also for an empty folder,
// which is logged as a warning). After that, each rescan emits its Removed
// events, then its Loaded events, each sorted by Name. A rename is a Removed
// for the old name and a Loaded for the new one. Settled events (see Saves in
// progress) come between rescans, sorted by Name.
//
// # What counts as a script
//
// A regular file, or a symlink to one, anywhere under the folder, whose
// extension is in Options.Extensions (default .js .mjs .cjs .ts, matched
// case-insensitively). Name is its slash-separated path relative to the
// folder. Never scripts: hidden names (starting with "."), editor droppings
// (names ending in "~", ".swp", ".swx", ".swo" or ".tmp", starting with "#"
// or ".#", and vim's "4913"), TypeScript declarations ("*.d.ts"), and the
// test files of `runner test` ("*.test.js", "*.test.ts": IsTestFile). Hidden
// folders and node_modules are not walked. Symlinked folders are walked
// (Kubernetes ConfigMap volumes with nested paths are made of them), each real
// folder once, so symlink loops end.
//
// # Modules
//
// Not every script is a plugin. Scripts in a folder named lib (at any depth) are modules,
// and so is every file a plugin imports, directly or through other modules, as
// Options.Imports tells (the engine passes scripting.Imports; without it only lib folders
// hold modules). Modules are never emitted. A plugin's Source.Modules lists the files it
// bundles, node_modules packages and JSON files included, and its Hash covers them (see
// Versions), so saving a module emits a Loaded event for exactly the plugins that import it;
// a file that becomes imported is Removed as a plugin. Imports are asked again only for a
// script whose content, or one of whose modules, changed, or whose last bundle failed. The
// folder's node_modules, which is not walked, is watched so that installing a package
// rescans. A module that becomes empty is held back for one more quiet period, as a plugin is.
//
// # Watching and debounce
//
// Folders, never files, are watched: the root, every subfolder (including
// ones created later, picked up by the rescan their creation triggers), and
// the folder holding each symlinked script's target, so editing the target
// reloads the script. Any fsnotify event or error, including a queue overflow,
// restarts a quiet period of Options.Debounce; when it ends the whole tree is
// rescanned and every script read. Because only the state after the quiet
// period is read, the steps of a save (truncate then write, write a temporary
// file then rename it over, vim's backup dance, a ConfigMap "..data" symlink
// swap) produce one event for the final content. The default quiet period is
// short (DefaultDebounce, 10 ms) because a save's steps come back to back, and
// every reload waits for it: a writer that pauses longer in the middle of a
// save is caught by the rules below (an emptied file held back, Settling and
// the grace period), not by a longer debounce. A file that becomes empty
// after having content is taken for a save in progress and held back for one
// more quiet period; if it is still empty then, it is emitted. A script that
// exists but cannot be read (permissions, I/O errors), and every script under a
// folder that cannot be read, keeps what was last emitted for it, like a broken
// save, and is logged as an error; only a script that is gone is Removed. If
// the folder itself cannot be read, the last emitted state stands. If it is
// removed, the kernel drops its watch with it: the last emitted state stands
// (logged as an error) and the folder is looked for every second; once it is
// back it is watched and rescanned again (logged at info level).
//
// # Saves in progress
//
// The debounce coalesces the steps of a save only if they share one quiet
// period: a writer that pauses longer (an fsync on a busy disk, a network
// filesystem, vim with backupcopy=yes writing in place) lets a rescan read a
// half-written file, and its Loaded event is followed by another for the whole
// file. So every Loaded event after the initial scan is marked
// Source.Settling, and once that content has stayed unchanged for
// Options.Grace (default 500 ms) a Settled event names it (Name and Hash).
// Unchanged means that no Loaded or Removed event for the name came since,
// and that the plugin's file and its script modules, read again when the
// grace period ends, still hold what the scan read; a file that differs then
// was written after the scan, and a rescan follows. Only content that settles
// can be taken as what the user saved: the engine reports a load error only
// for that.
//
// # Versions
//
// Source.Hash, the first 12 hex digits of the content's SHA-256, is the
// script's version; for a plugin that imports modules it is the first 12 hex
// digits of the SHA-256 of that and of each module's name and content hash.
// Loaded is emitted only when a name is new or its hash differs from the last
// one emitted for it, so rewriting identical content emits nothing.
package plugins
