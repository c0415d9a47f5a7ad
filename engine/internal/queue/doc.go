// Package queue is the engine's event queue: an unbounded FIFO between producers that must
// never block (client-go's listener goroutines, the fanout, the loader's markers, the index
// stage) and one consumer (a version's index stage or worker).
//
// Contract:
//   - Producers: any number of goroutines call Push and PushAll; neither ever blocks on the
//     consumer. PushAll's items are queued together, in order, under one lock: no other
//     producer's item lands between them. Items of one producer keep their order.
//   - Consumer: exactly one goroutine calls Pop or PopBatch. It takes items in the order they
//     were queued; Idle reports it is waiting on an empty queue, so it has finished with every
//     item it took (the offline harness's "this version is quiet").
//   - Close stops accepting items (Push then reports false); the consumer drains what is left
//     and then Pop reports done. An abort channel given to Pop makes it return at once, items
//     left or not: an aborted consumer takes nothing more.
//   - Ownership: a queued item belongs to the queue until taken; the queue zeroes each slot as
//     it is taken, so neither it nor its chunk pool keeps a reference to an item handed out.
//     Chunks emptied past a queue's one spare go to the pool it was made with (NewPooled), to
//     be reused by any queue sharing that pool.
//   - Overflow: a queue may have one policy (SetOverflow) that may fold an arriving item into
//     one already queued instead of queueing it (the engine's coalescing, package
//     engine/internal/coalesce). Its methods run with the queue's lock held, on the producer's
//     goroutine (Offer, Put) or the consumer's (Take), and must not block or call back into
//     the queue other than through the Locked view they are given.
//
// Everything here is safe for concurrent use as stated above. Nothing here starts a goroutine.
package queue
