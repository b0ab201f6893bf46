// Package clustertest holds the scale-out tests and benchmarks of the jetstream store (relay.md
// §5): a 3-node NATS JetStream cluster in process on loopback, three relays over it, each with
// its own store connected to a different node (streams with 3 replicas), and writers and
// readers spread across the relays on every lane. It is a package of its own so that it can
// import the relay without an import cycle; it has no API.
package clustertest
