//go:build k8s_1_36

package main

// The informer factory of v1.36; the rest of --time's release-specific
// code is in timing_queued.go.

import (
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/scheduler"
)

func newInformerFactory(client kubernetes.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(client, 0)
}
