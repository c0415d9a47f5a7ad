// Command phases runs the phases of `make test` (or any list of shell commands with
// dependencies between them) as early as their dependencies allow, and prints at the end how
// long each took, so a slower build or test run shows which phase grew.
//
// A phase is given as NAME[:DEP,DEP...]=COMMAND. COMMAND runs with `sh -c` once every DEP
// has succeeded; a phase may depend only on phases listed before it, so the plan has no
// cycles. Phases with no dependency between them run at the same time: on a cold machine the
// module downloads, the control plane's build and golangci-lint's build overlap that way.
//
// Output: every line a phase writes (stdout and stderr) is printed as it comes, prefixed with
// "[NAME] ", lines of different phases interleaved but never split. At the end, whatever
// happened, a table gives each phase's result, start (after the run began), wall time and CPU
// time (user+sys of the phase's processes and the descendants they waited for). CPU time
// changes little with the load other processes put on the machine, so comparing it between
// runs on a shared machine separates "this phase does more work" from "the machine was busy".
// A stopped phase's CPU counts only the processes that had ended before it was stopped.
//
// Failure: the first phase to fail stops the run like make does: no phase starts after it,
// and the running ones are stopped. Each phase runs in its own process group, which is
// signalled SIGTERM, then SIGKILL after a grace period; after a phase ends its group is killed
// so nothing it started outlives it. SIGINT or SIGTERM to this command stops the run the same
// way. The exit status is 0 when every phase succeeded, 1 when one failed, 130 when
// interrupted; the table is printed in every case.
//
// Goroutines: the scheduler (run) owns all phase state; each started phase has one goroutine
// that waits for its process and reports to the scheduler, which waits for every one of them
// before returning.
package main
