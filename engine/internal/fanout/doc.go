// Package fanout is the engine's one client-go registration per shared informer, fanned out
// to the subscribers watching it (a script version's subscriptions).
//
// A version used to register a handler of its own on each informer it watches, and client-go
// then replayed the whole cache to that registration through its listener: two goroutines and
// two channel hops per object, a utiltrace per notification while more than 1,024 were
// pending, and the new version's index stage waiting on it (13 % of a reload's CPU, and most of
// its first 100 ms). Now the engine registers once per informer. The fanout hands every
// notification to each subscriber's queue and remembers what it has handed out (key → object
// and resourceVersion, the objects client-go's own cache holds), so a subscriber that joins
// later is given those objects as initial adds from that record in bursts of
// queue.ChunkSize, under the lock the notifications take.
//
// The invariant: every notification is either in the record a joiner is given or reaches it
// afterwards, never both; per key its notifications keep the server's order. A subscriber that
// has left (Unsubscribe returned) is given nothing more. The last subscriber leaving removes
// the registration, waiting until client-go delivers nothing more to it; the next subscriber
// registers anew and is given client-go's replay of its cache.
//
// What a subscriber is: Subscriber, the informer it watches, the queue its items go to, and
// how a Notification becomes an item of that queue (the engine's event). An update whose
// metadata.uid changed reaches subscribers as a delete (final state unknown) and an add,
// queued together.
//
// Goroutines and locks: Subscribe and Unsubscribe are the engine's loader's (any goroutine,
// serialised by Registry's lock); notifications arrive on client-go's listener goroutine of
// each registration. Locks: Registry.mu before a fanout's mu (taken by every notification);
// neither is held while waiting on client-go. Subscriber.Item and the queue's Push run with
// the fanout's lock held and must not block. Nothing here starts a goroutine (client-go runs
// the listener).
package fanout
