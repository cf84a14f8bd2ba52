package main

// The scheduler around the framework: what kube-scheduler's New builds
// (fake clientset and informers instead of an API server, the scheduler
// cache and its snapshot, the DRA and CSI managers, one framework per
// profile from the in-tree registry), and the cluster state loaded into it.
// The scheduling cycle itself is in cycle.go.

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

// profile is one framework with the plugin instances it runs.
type profile struct {
	name    string
	fw      framework.Framework
	plugins map[string]fwk.Plugin
	// Plugin names per extension point, in the framework's order.
	preFilter, filter, score []string
	weights                  map[string]int64
	hasPostFilter            bool
	preemption               *preemptionHooks
}

type env struct {
	ctx       context.Context
	logger    klog.Logger
	client    *fake.Clientset
	factory   *trackingFactory
	cache     internalcache.Cache
	snapshot  *internalcache.Snapshot
	nominator *nominator
	// Pending pods whose nomination a preemption cleared (simulate).
	unnominated map[types.UID]bool
	profiles    []*profile
	byName      map[string]*profile
	// Without --config the default profile evaluates every pod, whatever
	// its schedulerName (kschedx's question is "where would the default
	// scheduler put it").
	configured bool
	state      *clusterState
}

// loadConfig is the KubeSchedulerConfiguration kube-scheduler would run:
// the file decoded and defaulted by the scheduler's own scheme and
// validated, or the version's default configuration.
func loadConfig(path string) (*config.KubeSchedulerConfiguration, error) {
	if path == "" {
		var versioned configv1.KubeSchedulerConfiguration
		scheme.Scheme.Default(&versioned)
		cfg := &config.KubeSchedulerConfiguration{}
		if err := scheme.Scheme.Convert(&versioned, cfg, nil); err != nil {
			return nil, err
		}
		return cfg, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	cfg, ok := obj.(*config.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("%s: not a KubeSchedulerConfiguration", path)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return cfg, nil
}

func newEnv(ctx context.Context, cfg *config.KubeSchedulerConfiguration, configured bool, st *clusterState) (*env, error) {
	e := &env{
		ctx:         ctx,
		logger:      klog.FromContext(ctx),
		client:      fake.NewSimpleClientset(),
		nominator:   newNominator(),
		unnominated: map[types.UID]bool{},
		byName:      map[string]*profile{},
		configured:  configured,
		state:       st,
	}
	for _, obj := range st.objects {
		if err := e.client.Tracker().Add(obj); err != nil {
			return nil, fmt.Errorf("adding %T: %v", obj, err)
		}
	}
	// The API holds the fixture as it was stored. What the scheduler would
	// write there (preemption's status patches) is dropped: the driver
	// applies each outcome to the scheduler cache and the nominator itself,
	// and no informer event follows the start, so one pod's cycle never
	// changes what another's reads through a lister.
	for _, verb := range []string{"create", "update", "patch", "delete"} {
		e.client.PrependReactor(verb, "*", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, nil
		})
	}
	e.factory = newTrackingFactory(informers.NewSharedInformerFactory(e.client, 0))
	e.cache = newSchedulerCache(ctx)
	e.snapshot = internalcache.NewEmptySnapshot()

	// As scheduler.New: the DRA manager over an assume cache of claims and
	// the resource slice tracker, the CSI manager over CSINodes.
	var draManager fwk.SharedDRAManager
	var sliceTracker *resourceslicetracker.Tracker
	var claimCache *assumecache.AssumeCache
	if utilfeature.DefaultFeatureGate.Enabled(features.DynamicResourceAllocation) {
		claimCache = assumecache.NewAssumeCache(e.logger, e.factory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
		opts := resourceslicetracker.Options{
			EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
			EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
			SliceInformer:            e.factory.Resource().V1().ResourceSlices(),
			KubeClient:               e.client,
		}
		if opts.EnableDeviceTaintRules {
			setTaintInformers(&opts, e.factory)
		}
		var err error
		sliceTracker, err = resourceslicetracker.StartTracker(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("starting the resource slice tracker: %v", err)
		}
		manager := dynamicresources.NewDRAManager(ctx, claimCache, sliceTracker, e.factory)
		draManager = manager
		if utilfeature.DefaultFeatureGate.Enabled(features.DRAExtendedResource) {
			// The device classes' extended resource names: a cache that
			// kube-scheduler's addAllEventHandlers feeds from the DeviceClass
			// informer (NodeResourcesFit and DynamicResources read it).
			erCache := manager.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache)
			if _, err := e.factory.Resource().V1().DeviceClasses().Informer().AddEventHandler(erCache); err != nil {
				return nil, fmt.Errorf("the extended resource cache: %v", err)
			}
		}
	}
	csiManager := nodevolumelimits.NewCSIManager(e.factory.Storage().V1().CSINodes().Lister())

	for i := range cfg.Profiles {
		prof := &cfg.Profiles[i]
		p := &profile{name: prof.SchedulerName, plugins: map[string]fwk.Plugin{}, weights: map[string]int64{}}
		registry := frameworkruntime.Registry{}
		for name, factory := range frameworkplugins.NewInTreeRegistry() {
			name, factory := name, factory
			registry[name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
				pl, err := factory(ctx, args, h)
				if err == nil {
					p.plugins[name] = pl
				}
				return pl, err
			}
		}
		opts := []frameworkruntime.Option{
			frameworkruntime.WithClientSet(e.client),
			frameworkruntime.WithInformerFactory(e.factory),
			frameworkruntime.WithSharedDRAManager(draManager),
			frameworkruntime.WithSharedCSIManager(csiManager),
			frameworkruntime.WithSnapshotSharedLister(e.snapshot),
			frameworkruntime.WithEventRecorder(&events.FakeRecorder{}),
			frameworkruntime.WithPodNominator(e.nominator),
			frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
			// One worker: the preemption dry runs examine the potential
			// nodes in order, and the first Filter error met is the one of
			// the first failing node in node order.
			frameworkruntime.WithParallelism(1),
		}
		opts = append(opts, versionFrameworkOptions(e)...)
		fw, err := frameworkruntime.NewFramework(ctx, registry, prof, opts...)
		if err != nil {
			return nil, fmt.Errorf("profile %s: %v", prof.SchedulerName, err)
		}
		p.fw = fw
		listed := fw.ListPlugins()
		for _, pl := range listed.PreFilter.Enabled {
			p.preFilter = append(p.preFilter, pl.Name)
		}
		for _, pl := range listed.Filter.Enabled {
			p.filter = append(p.filter, pl.Name)
		}
		for _, pl := range listed.Score.Enabled {
			p.score = append(p.score, pl.Name)
			p.weights[pl.Name] = int64(pl.Weight)
		}
		p.hasPostFilter = fw.HasPostFilterPlugins()
		if dp, ok := p.plugins[defaultpreemption.Name].(*defaultpreemption.DefaultPreemption); ok {
			p.preemption = installPreemptionHooks(dp, fw)
		}
		e.profiles = append(e.profiles, p)
		e.byName[p.name] = p
	}

	e.factory.Start(ctx.Done())
	var trackerSynced []func() bool
	if sliceTracker != nil {
		trackerSynced = append(trackerSynced, sliceTracker.HasSynced)
	}
	if !e.factory.synced(time.Minute, trackerSynced...) {
		return nil, fmt.Errorf("informers, their event handlers or the resource slice tracker did not sync")
	}
	for typ, ok := range e.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("informer for %v did not sync", typ)
		}
	}

	// The cluster as the scheduler's informers deliver it: nodes in
	// fixture order (the cache's node tree interleaves their zones in
	// that order), then the bound pods.
	for _, n := range st.nodes {
		e.cache.AddNode(e.logger, n)
	}
	for _, pod := range st.bound {
		if err := e.cache.AddPod(e.logger, pod); err != nil {
			return nil, fmt.Errorf("pod %s/%s: %v", pod.Namespace, pod.Name, err)
		}
	}
	// Pending pods nominated to an existing node, as the queue holds them.
	nodes := map[string]bool{}
	for _, n := range st.nodes {
		nodes[n.Name] = true
	}
	for _, pod := range st.pending {
		if nn := pod.Status.NominatedNodeName; nn != "" && nodes[nn] {
			pi, err := framework.NewPodInfo(pod)
			if err != nil {
				return nil, err
			}
			e.nominator.nominate(pi, nn)
		}
	}
	return e, nil
}

func (e *env) profileFor(pod *v1.Pod) *profile {
	if !e.configured {
		return e.profiles[0]
	}
	return e.byName[pod.Spec.SchedulerName]
}

// queueOrder is PrioritySort's order (higher priority first, then earlier
// creation; pods without a creation time count as added now), the
// fixture's order breaking the remaining ties.
func queueOrder(pods []*v1.Pod) []*v1.Pod {
	out := append([]*v1.Pod(nil), pods...)
	sort.SliceStable(out, func(i, j int) bool {
		pi, pj := podPriority(out[i]), podPriority(out[j])
		if pi != pj {
			return pi > pj
		}
		ti, tj := out[i].CreationTimestamp, out[j].CreationTimestamp
		if ti.IsZero() != tj.IsZero() {
			return !ti.IsZero()
		}
		return ti.Before(&tj)
	})
	return out
}

func podPriority(pod *v1.Pod) int32 {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority
	}
	return 0
}

func podKey(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }
