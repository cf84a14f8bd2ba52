package main

// What the API server does to an object before kube-scheduler sees it
// (docs/fixtures.md, "Rules"): the release's own core/v1 (and other groups')
// defaulting functions, then the admission steps that matter to scheduling,
// written here after the admission plugins they stand for: RuntimeClass,
// Priority, DefaultTolerationSeconds and the pod strategy's matchLabelKeys
// merge. Also the fixture conventions kschedx documents: a stable uid for
// objects without one, namespaces that objects use but the fixture lacks,
// terminal pods left out.

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"reflect"
	"sort"
	"strconv"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/component-base/featuregate"
	appsdefaults "k8s.io/kubernetes/pkg/apis/apps/v1"
	coredefaults "k8s.io/kubernetes/pkg/apis/core/v1"
	policydefaults "k8s.io/kubernetes/pkg/apis/policy/v1"
	resourcedefaults "k8s.io/kubernetes/pkg/apis/resource/v1"
	schedulingdefaults "k8s.io/kubernetes/pkg/apis/scheduling/v1"
	storagedefaults "k8s.io/kubernetes/pkg/apis/storage/v1"
	"k8s.io/kubernetes/pkg/features"
)

// The priority classes every cluster has (the API server creates them).
var systemPriorityClasses = map[string]int32{
	"system-cluster-critical": 2000000000,
	"system-node-critical":    2000001000,
}

const defaultTolerationSeconds = int64(300)

// clusterState is the admitted fixture.
type clusterState struct {
	nodes   []*v1.Node
	bound   []*v1.Pod
	pending []*v1.Pod
	// objects is everything the API server would hold, for the fake clientset.
	objects []runtime.Object
}

// defaultingScheme holds the release's defaulting functions of every group
// the scheduler reads.
func defaultingScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		coredefaults.RegisterDefaults, appsdefaults.RegisterDefaults, storagedefaults.RegisterDefaults,
		policydefaults.RegisterDefaults, schedulingdefaults.RegisterDefaults,
		resourcedefaults.RegisterDefaults,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// stableUID is kschedx's uid for an object without one: the SHA-1 of
// "namespace/name" for a pod, "Kind/namespace/name" for other kinds, laid
// out as a UUID.
func stableUID(kind, namespace, name string) types.UID {
	key := namespace + "/" + name
	if kind != "Pod" {
		key = kind + "/" + namespace + "/" + name
	}
	sum := sha1.Sum([]byte(key))
	h := hex.EncodeToString(sum[:])
	return types.UID(h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32])
}

func admitFixture(raws []rawObject) (*clusterState, error) {
	scheme, err := defaultingScheme()
	if err != nil {
		return nil, err
	}
	type item struct {
		kind   string
		obj    runtime.Object
		origin string
	}
	var items []item
	priorityClasses := map[string]*schedulingv1.PriorityClass{}
	runtimeClasses := map[string]*nodev1.RuntimeClass{}
	namespaces := map[string]bool{}
	for _, raw := range raws {
		obj, err := decode(raw)
		if err != nil {
			return nil, err
		}
		if obj == nil {
			continue
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			return nil, err
		}
		if m.GetName() == "" {
			return nil, fmt.Errorf("%s: %s has no metadata.name", raw.origin, raw.kind)
		}
		if namespacedKinds[raw.kind] && m.GetNamespace() == "" {
			m.SetNamespace(metav1.NamespaceDefault)
		}
		if !namespacedKinds[raw.kind] {
			m.SetNamespace("")
		}
		if m.GetUID() == "" {
			m.SetUID(stableUID(raw.kind, m.GetNamespace(), m.GetName()))
		}
		// Assume caches compare resource versions as integers.
		if _, err := strconv.ParseUint(m.GetResourceVersion(), 10, 64); err != nil {
			m.SetResourceVersion("1")
		}
		scheme.Default(obj)
		switch o := obj.(type) {
		case *schedulingv1.PriorityClass:
			priorityClasses[o.Name] = o
		case *nodev1.RuntimeClass:
			runtimeClasses[o.Name] = o
		case *v1.Namespace:
			namespaces[o.Name] = true
		}
		items = append(items, item{raw.kind, obj, raw.origin})
	}

	// Priority admission picks the lowest-valued class when several claim
	// to be the global default.
	var globalDefault *schedulingv1.PriorityClass
	for _, pc := range priorityClasses {
		if pc.GlobalDefault && (globalDefault == nil || pc.Value < globalDefault.Value ||
			(pc.Value == globalDefault.Value && pc.Name < globalDefault.Name)) {
			globalDefault = pc
		}
	}

	st := &clusterState{}
	used := map[string]bool{}
	for _, it := range items {
		switch o := it.obj.(type) {
		case *v1.Pod:
			if o.Status.Phase == v1.PodSucceeded || o.Status.Phase == v1.PodFailed {
				continue
			}
			if err := admitPod(o, priorityClasses, runtimeClasses, globalDefault); err != nil {
				return nil, fmt.Errorf("%s: pod %s/%s: %v", it.origin, o.Namespace, o.Name, err)
			}
			used[o.Namespace] = true
			if o.Spec.NodeName == "" {
				st.pending = append(st.pending, o)
			} else {
				st.bound = append(st.bound, o)
			}
		case *v1.Node:
			st.nodes = append(st.nodes, o)
		}
		if m, _ := meta.Accessor(it.obj); m.GetNamespace() != "" && (it.kind == "PersistentVolumeClaim" ||
			it.kind == "ResourceClaim" || it.kind == "Service") {
			used[m.GetNamespace()] = true
		}
		st.objects = append(st.objects, it.obj)
	}
	// Namespaces objects use but the fixture lacks exist, with the one label
	// the API server sets on every namespace.
	var missing []string
	for ns := range used {
		if !namespaces[ns] {
			missing = append(missing, ns)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: name, UID: stableUID("Namespace", "", name), ResourceVersion: "1",
		}}
		scheme.Default(ns)
		st.objects = append(st.objects, ns)
	}
	return st, nil
}

// admitPod applies the admission plugins that change what the scheduler
// reads, in the API server's order.
func admitPod(pod *v1.Pod, classes map[string]*schedulingv1.PriorityClass, runtimeClasses map[string]*nodev1.RuntimeClass,
	globalDefault *schedulingv1.PriorityClass) error {
	spec := &pod.Spec
	// RuntimeClass: the class's pod overhead and scheduling constraints.
	if spec.RuntimeClassName != nil {
		if rc := runtimeClasses[*spec.RuntimeClassName]; rc != nil {
			if rc.Overhead != nil && len(spec.Overhead) == 0 && len(rc.Overhead.PodFixed) > 0 {
				spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
			}
			if rc.Scheduling != nil {
				if len(rc.Scheduling.NodeSelector) > 0 {
					merged := map[string]string{}
					for k, v := range rc.Scheduling.NodeSelector {
						merged[k] = v
					}
					for k, v := range spec.NodeSelector {
						merged[k] = v
					}
					spec.NodeSelector = merged
				}
				for _, t := range rc.Scheduling.Tolerations {
					present := false
					for _, have := range spec.Tolerations {
						if reflect.DeepEqual(have, t) {
							present = true
							break
						}
					}
					if !present {
						spec.Tolerations = append(spec.Tolerations, t)
					}
				}
			}
		}
	}

	// Priority: the value of the pod's class, or of the global default class.
	var pc *schedulingv1.PriorityClass
	if spec.PriorityClassName != "" {
		pc = classes[spec.PriorityClassName]
		if pc == nil {
			if value, ok := systemPriorityClasses[spec.PriorityClassName]; ok {
				pc = &schedulingv1.PriorityClass{Value: value}
			}
		}
		if pc == nil && spec.Priority == nil {
			return fmt.Errorf("no PriorityClass with name %s was found", spec.PriorityClassName)
		}
	} else if globalDefault != nil {
		pc = globalDefault
		spec.PriorityClassName = globalDefault.Name
	}
	if spec.Priority == nil {
		var value int32
		if pc != nil {
			value = pc.Value
		}
		spec.Priority = &value
	}
	if spec.PreemptionPolicy == nil {
		policy := v1.PreemptLowerPriority
		if pc != nil && pc.PreemptionPolicy != nil {
			policy = *pc.PreemptionPolicy
		}
		spec.PreemptionPolicy = &policy
	}

	// DefaultTolerationSeconds: tolerate not-ready and unreachable nodes for 300 s.
	notReady, unreachable := false, false
	for _, t := range spec.Tolerations {
		if t.Effect != "" && t.Effect != v1.TaintEffectNoExecute {
			continue
		}
		if t.Key == "" || t.Key == v1.TaintNodeNotReady {
			notReady = true
		}
		if t.Key == "" || t.Key == v1.TaintNodeUnreachable {
			unreachable = true
		}
	}
	for _, add := range []struct {
		key     string
		present bool
	}{{v1.TaintNodeNotReady, notReady}, {v1.TaintNodeUnreachable, unreachable}} {
		if !add.present {
			seconds := defaultTolerationSeconds
			spec.Tolerations = append(spec.Tolerations, v1.Toleration{
				Key: add.key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &seconds,
			})
		}
	}

	mergeLabelKeys(pod)
	return nil
}

// mergeLabelKeys is the pod strategy's PrepareForCreate for matchLabelKeys:
// an affinity term's matchLabelKeys (mismatchLabelKeys) become `key in
// (value)` (`key notin (value)`) requirements of its labelSelector
// (MatchLabelKeysInPodAffinity), a spread constraint's matchLabelKeys `key
// in (value)` (MatchLabelKeysInPodTopologySpreadSelectorMerge), for the
// keys the pod has a label of; a term without a labelSelector is left alone.
// These are the API server's gates, at the release's defaults: --feature-gates
// are kube-scheduler's (a cluster's API server keeps its own).
func mergeLabelKeys(pod *v1.Pod) {
	merge := func(sel *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator) {
		for _, key := range keys {
			if value, ok := pod.Labels[key]; ok {
				sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
					Key: key, Operator: op, Values: []string{value},
				})
			}
		}
	}
	term := func(t *v1.PodAffinityTerm) {
		if t.LabelSelector == nil || (len(t.MatchLabelKeys) == 0 && len(t.MismatchLabelKeys) == 0) {
			return
		}
		merge(t.LabelSelector, t.MatchLabelKeys, metav1.LabelSelectorOpIn)
		merge(t.LabelSelector, t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn)
	}
	if a := pod.Spec.Affinity; a != nil && apiServerDefault(features.MatchLabelKeysInPodAffinity) {
		if a.PodAffinity != nil {
			for i := range a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				term(&a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
			for i := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				term(&a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
		}
		if a.PodAntiAffinity != nil {
			for i := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
				term(&a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[i].PodAffinityTerm)
			}
			for i := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
				term(&a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[i])
			}
		}
	}
	if apiServerDefault(features.MatchLabelKeysInPodTopologySpread) &&
		apiServerDefault(features.MatchLabelKeysInPodTopologySpreadSelectorMerge) {
		for i := range pod.Spec.TopologySpreadConstraints {
			c := &pod.Spec.TopologySpreadConstraints[i]
			if len(c.MatchLabelKeys) > 0 && c.LabelSelector != nil {
				merge(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn)
			}
		}
	}
}

// apiServerDefault is a gate's default in this release: the value an API
// server that leaves it alone runs with.
func apiServerDefault(f featuregate.Feature) bool {
	spec, ok := utilfeature.DefaultMutableFeatureGate.GetAll()[f]
	return ok && spec.Default
}
