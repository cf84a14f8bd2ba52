package main

// An informer factory that knows every event handler registered on its
// informers. Plugins and the caches they keep (the volume binder's PV and
// PVC assume caches, the DRA claim cache and slice tracker) fill themselves
// from their handlers, which informers serve asynchronously; nothing else
// says when a handler has seen the initial list. The oracle waits for every
// registration to have synced before the first cycle, so that no cycle can
// run against a half-filled cache.

import (
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/informers/apps"
	"k8s.io/client-go/informers/core"
	"k8s.io/client-go/informers/internalinterfaces"
	"k8s.io/client-go/informers/node"
	"k8s.io/client-go/informers/policy"
	"k8s.io/client-go/informers/resource"
	"k8s.io/client-go/informers/scheduling"
	"k8s.io/client-go/informers/storage"
	toolscache "k8s.io/client-go/tools/cache"
)

type trackingFactory struct {
	informers.SharedInformerFactory
	mu        sync.Mutex
	regs      []toolscache.ResourceEventHandlerRegistration
	informers []toolscache.SharedIndexInformer
}

func newTrackingFactory(f informers.SharedInformerFactory) *trackingFactory {
	return &trackingFactory{SharedInformerFactory: f}
}

// InformerFor is the factory's shared informer, its handlers tracked.
func (f *trackingFactory) InformerFor(obj runtime.Object, newFunc internalinterfaces.NewInformerFunc) toolscache.SharedIndexInformer {
	inf := f.SharedInformerFactory.InformerFor(obj, newFunc)
	f.mu.Lock()
	f.informers = append(f.informers, inf)
	f.mu.Unlock()
	return &trackingInformer{SharedIndexInformer: inf, f: f}
}

// The groups the scheduler reads, their informers made through InformerFor above.
func (f *trackingFactory) Apps() apps.Interface { return apps.New(f, metav1.NamespaceAll, nil) }
func (f *trackingFactory) Core() core.Interface { return core.New(f, metav1.NamespaceAll, nil) }
func (f *trackingFactory) Node() node.Interface { return node.New(f, metav1.NamespaceAll, nil) }
func (f *trackingFactory) Policy() policy.Interface {
	return policy.New(f, metav1.NamespaceAll, nil)
}
func (f *trackingFactory) Resource() resource.Interface {
	return resource.New(f, metav1.NamespaceAll, nil)
}
func (f *trackingFactory) Scheduling() scheduling.Interface {
	return scheduling.New(f, metav1.NamespaceAll, nil)
}
func (f *trackingFactory) Storage() storage.Interface {
	return storage.New(f, metav1.NamespaceAll, nil)
}

func (f *trackingFactory) track(reg toolscache.ResourceEventHandlerRegistration, err error) (toolscache.ResourceEventHandlerRegistration, error) {
	if err == nil && reg != nil {
		f.mu.Lock()
		f.regs = append(f.regs, reg)
		f.mu.Unlock()
	}
	return reg, err
}

// synced waits until every informer made so far has listed its objects,
// and every handler registered so far has seen that list (more, the
// resource slice tracker's, in `extra`); false when `timeout` passed first.
// It polls every millisecond: the factory's WaitForCacheSync polls every
// 100 ms, most of a small fixture's run.
func (f *trackingFactory) synced(timeout time.Duration, extra ...func() bool) bool {
	deadline := time.Now().Add(timeout)
	f.mu.Lock()
	var checks []func() bool
	for _, inf := range f.informers {
		checks = append(checks, inf.HasSynced)
	}
	for _, reg := range f.regs {
		checks = append(checks, reg.HasSynced)
	}
	f.mu.Unlock()
	for _, done := range append(checks, extra...) {
		for !done() {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(time.Millisecond)
		}
	}
	return true
}

type trackingInformer struct {
	toolscache.SharedIndexInformer
	f *trackingFactory
}

func (i *trackingInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.f.track(i.SharedIndexInformer.AddEventHandler(h))
}

func (i *trackingInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.f.track(i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(h, resync))
}

func (i *trackingInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, opts toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.f.track(i.SharedIndexInformer.AddEventHandlerWithOptions(h, opts))
}
