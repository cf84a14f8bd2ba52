//go:build k8s_1_37

package main

// What differs in k8s.io/kubernetes v1.37's API from the other releases.

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

func newDeviceTaintRule() runtime.Object { return &resourcev1.DeviceTaintRule{} }

func newSchedulerCache(ctx context.Context) internalcache.Cache {
	return internalcache.New(ctx, nil, utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload),
		utilfeature.DefaultFeatureGate.Enabled(features.CompositePodGroup))
}

func setTaintInformers(opts *resourceslicetracker.Options, factory informers.SharedInformerFactory) {
	opts.TaintInformer = factory.Resource().V1().DeviceTaintRules()
}

func versionFrameworkOptions(e *env) []frameworkruntime.Option {
	return []frameworkruntime.Option{
		frameworkruntime.WithMutableSnapshotLister(e.snapshot),
		frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
		frameworkruntime.WithPodGroupManager(e.cache),
	}
}

// installPreemptionHooks gives the plugin a synchronous executor that
// evicts nobody through the API, and an evaluator over the wrapped Interface.
func installPreemptionHooks(dp *defaultpreemption.DefaultPreemption, fh fwk.Handle) *preemptionHooks {
	h := &preemptionHooks{byNode: map[string]dryRun{}}
	fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	fts.EnableAsyncPreemption = false
	dp.Executor = preemption.NewExecutor(fh, fts)
	dp.Executor.PreemptPod = func(context.Context, preemption.Candidate, preemption.ExecutorPreemptor, *v1.Pod, string) (bool, error) {
		return false, nil
	}
	dp.Evaluator = preemption.NewEvaluator(dp.Name(), fh, &preemptionIface{Interface: dp, hooks: h}, dp.Executor)
	dp.MoreImportantVictim = moreImportantVictim
	return h
}

// moreImportantVictim is preemption.MoreImportantVictim (priority, then pod
// groups before single pods, then larger groups, then earlier start) with
// the start times of preempt.go: upstream's victims take time.Now() when
// built, for pods that have not started.
func moreImportantVictim(a, b preemption.Victim) bool {
	if a.Priority() != b.Priority() {
		return a.Priority() > b.Priority()
	}
	rank := func(v preemption.Victim) int {
		switch v.Type() {
		case fwk.CompositePodGroupKeyType:
			return 3
		case fwk.PodGroupKeyType:
			return 2
		}
		return 1
	}
	if r1, r2 := rank(a), rank(b); r1 != r2 {
		return r1 > r2
	}
	if len(a.Pods()) != len(b.Pods()) {
		return len(a.Pods()) > len(b.Pods())
	}
	return victimStart(a).Before(victimStart(b))
}

func victimStart(v preemption.Victim) (earliest time.Time) {
	for i, pi := range v.Pods() {
		if t := startTime(pi.GetPod()); i == 0 || t.Before(earliest) {
			earliest = t
		}
	}
	return earliest
}

func (w *preemptionIface) SelectVictimsOnNode(ctx context.Context, state fwk.CycleState, pod *v1.Pod,
	nodeInfo fwk.NodeInfo, victims []*preemption.DomainVictim, pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	pods, n, st := w.Interface.SelectVictimsOnNode(ctx, state, pod, nodeInfo, victims, pdbs)
	w.hooks.record(nodeInfo.Node().Name, pods, n, st)
	return pods, n, st
}

// assumedPod is the pod as the scheduler assumes it on its node: with the
// node-allocatable resource claims DynamicResources computed for it.
func assumedPod(state fwk.CycleState, pod *v1.Pod, node string) *v1.Pod {
	out := pod.DeepCopy()
	out.Spec.NodeName = node
	if utilfeature.DefaultFeatureGate.Enabled(features.DRANodeAllocatableResources) {
		out.Status.NodeAllocatableResourceClaimStatuses =
			dynamicresources.ExtractPodNodeAllocatableResourceClaimStatus(klog.Background(), state, node)
	}
	return out
}
