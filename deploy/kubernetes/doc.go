// Package kubernetes holds the manifests that run llmbench's shards on
// Kubernetes (an Indexed Job or a JobSet, then a merge Job), and the tests
// that decode them strictly with the Kubernetes and JobSet API types and
// check that llmbench accepts their command lines.
package kubernetes
