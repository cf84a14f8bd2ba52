package main

// simulate: each pod's outcome applied before the next pod, with kschedx's
// documented semantics (docs/simulate.md): a scheduled pod is assumed on
// its node and reserved; a preemption deletes its victims for good, clears
// the nominations of lower-priority pods on the node, nominates the
// preemptor there and retries it at once; an unschedulable pod whose
// PostFilter cleared its nomination loses it.

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

func (e *env) step(pod *v1.Pod) *podResult {
	if e.unnominated[pod.UID] {
		// prepareCandidate cleared its nomination with a status patch
		// (clearNominatedNodeName): the pod comes back to the queue without
		// status.nominatedNodeName, so its cycle has no nominated node to try.
		pod = pod.DeepCopy()
		pod.Status.NominatedNodeName = ""
	}
	r := e.schedule(pod)
	switch {
	case r.status == "Scheduled":
		e.place(r, pod, r.selected, r)
	case r.status == "Unschedulable" && r.nominated != nil && *r.nominated != "":
		node := *r.nominated
		keys := make([]string, 0, len(r.victims))
		for _, victim := range r.victims {
			if err := e.cache.RemovePod(e.logger, victim); err != nil {
				r.notes = append(r.notes, fmt.Sprintf("oracle: removing victim %s: %v", podKey(victim), err))
			}
			e.nominator.DeleteNominatedPodIfExists(victim)
			keys = append(keys, podKey(victim))
		}
		// prepareCandidate clears the nominations of lower-priority pods
		// nominated to the node.
		for _, pi := range e.nominator.NominatedPodsForNode(node) {
			if podPriority(pi.GetPod()) < podPriority(pod) {
				e.nominator.DeleteNominatedPodIfExists(pi.GetPod())
				e.unnominated[pi.GetPod().UID] = true
			}
		}
		retryPod := pod.DeepCopy()
		retryPod.Status.NominatedNodeName = node
		if pi, err := framework.NewPodInfo(retryPod); err == nil {
			e.nominator.nominate(pi, node)
		}
		retry := e.schedule(retryPod)
		deleted := fmt.Sprintf("preemption: deleted %d victim(s) [%s] on %s", len(r.victims), strings.Join(keys, ", "), node)
		if retry.status == "Scheduled" {
			e.place(r, retryPod, retry.selected, retry)
			r.notes = append(r.notes, fmt.Sprintf("%s; retried at once: placed on %s", deleted, retry.selected))
		} else {
			msg := ""
			if retry.message != nil {
				msg = *retry.message
			}
			r.notes = append(r.notes, fmt.Sprintf("%s; retried at once: still %s: %s", deleted, retry.status, msg))
		}
	case r.nominated != nil && *r.nominated == "":
		e.nominator.DeleteNominatedPodIfExists(pod)
	}
	return r
}

// place assumes the pod on the node and runs Reserve with the cycle's
// state, as schedulingCycle does; a Reserve failure forgets the pod again
// and is the result's outcome (a FitError over that one node).
func (e *env) place(result *podResult, pod *v1.Pod, node string, cycle *podResult) {
	p := e.profileFor(pod)
	assumed := assumedPod(cycle.state, pod, node)
	if err := e.cache.AssumePod(e.logger, assumed); err != nil {
		result.status = "Error"
		result.message = strPtr(err.Error())
		return
	}
	if st := p.fw.RunReservePluginsReserve(e.ctx, cycle.state, assumed, node); !st.IsSuccess() {
		p.fw.RunReservePluginsUnreserve(e.ctx, cycle.state, assumed, node)
		_ = e.cache.ForgetPod(e.logger, assumed)
		result.selected = ""
		result.top = []string{}
		if st.IsRejected() {
			fitErr := &framework.FitError{NumAllNodes: 1, Pod: pod,
				Diagnosis: framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}}
			fitErr.Diagnosis.NodeToStatus.Set(node, st)
			result.status = "Unschedulable"
			result.message = strPtr(fitErr.Error())
		} else {
			result.status = "Error"
			result.message = strPtr(st.Message())
		}
		return
	}
	e.nominator.DeleteNominatedPodIfExists(pod)
	result.placed = node
}
