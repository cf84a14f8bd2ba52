//go:build k8s_1_35

package main

// What differs in k8s.io/kubernetes v1.35's API from the other releases.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	policy "k8s.io/api/policy/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	workloadmanager "k8s.io/kubernetes/pkg/scheduler/backend/workloadmanager"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

func newDeviceTaintRule() runtime.Object { return &resourcev1alpha3.DeviceTaintRule{} }

// newSchedulerCache: assumed pods never expire (the scheduler's TTL is 0).
func newSchedulerCache(ctx context.Context) internalcache.Cache {
	return internalcache.New(ctx, 0, nil)
}

func setTaintInformers(opts *resourceslicetracker.Options, factory informers.SharedInformerFactory) {
	opts.TaintInformer = factory.Resource().V1alpha3().DeviceTaintRules()
	opts.ClassInformer = factory.Resource().V1().DeviceClasses()
}

func versionFrameworkOptions(e *env) []frameworkruntime.Option {
	if utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload) {
		return []frameworkruntime.Option{frameworkruntime.WithWorkloadManager(workloadmanager.New())}
	}
	return nil
}

// installPreemptionHooks gives the plugin a synchronous evaluator over the
// wrapped Interface, one that evicts nobody through the API.
func installPreemptionHooks(dp *defaultpreemption.DefaultPreemption, fh fwk.Handle) *preemptionHooks {
	h := &preemptionHooks{byNode: map[string]dryRun{}}
	dp.Evaluator = preemption.NewEvaluator(dp.Name(), fh, &preemptionIface{Interface: dp, hooks: h}, false)
	dp.Evaluator.PreemptPod = func(context.Context, preemption.Candidate, *v1.Pod, *v1.Pod, string) error { return nil }
	dp.MoreImportantPod = moreImportantPod
	return h
}

func (w *preemptionIface) SelectVictimsOnNode(ctx context.Context, state fwk.CycleState, pod *v1.Pod,
	nodeInfo fwk.NodeInfo, pdbs []*policy.PodDisruptionBudget) ([]*v1.Pod, int, *fwk.Status) {
	pods, n, st := w.Interface.SelectVictimsOnNode(ctx, state, pod, nodeInfo, pdbs)
	w.hooks.record(nodeInfo.Node().Name, pods, n, st)
	return pods, n, st
}

// assumedPod is the pod as the scheduler assumes it on its node.
func assumedPod(_ fwk.CycleState, pod *v1.Pod, node string) *v1.Pod {
	out := pod.DeepCopy()
	out.Spec.NodeName = node
	return out
}
