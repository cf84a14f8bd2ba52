package main

// The pods nominated to nodes (status.nominatedNodeName): the part of
// kube-scheduler's scheduling queue the framework reads (fwk.PodNominator),
// kept by the driver since the oracle has no queue.

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

type nominator struct {
	mu     sync.RWMutex
	byNode map[string][]fwk.PodInfo
	nodeOf map[types.UID]string
}

func newNominator() *nominator {
	return &nominator{byNode: map[string][]fwk.PodInfo{}, nodeOf: map[types.UID]string{}}
}

var _ fwk.PodNominator = &nominator{}

// nominate records `pi` as nominated to `node` ("" removes its nomination).
func (n *nominator) nominate(pi fwk.PodInfo, node string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pi.GetPod().UID)
	if node == "" {
		return
	}
	n.byNode[node] = append(n.byNode[node], pi)
	n.nodeOf[pi.GetPod().UID] = node
}

func (n *nominator) deleteLocked(uid types.UID) {
	node, ok := n.nodeOf[uid]
	if !ok {
		return
	}
	delete(n.nodeOf, uid)
	kept := n.byNode[node][:0:0]
	for _, pi := range n.byNode[node] {
		if pi.GetPod().UID != uid {
			kept = append(kept, pi)
		}
	}
	if len(kept) == 0 {
		delete(n.byNode, node)
	} else {
		n.byNode[node] = kept
	}
}

func (n *nominator) AddNominatedPod(_ klog.Logger, pi fwk.PodInfo, info *fwk.NominatingInfo) {
	node := pi.GetPod().Status.NominatedNodeName
	if info != nil && info.Mode() == fwk.ModeOverride {
		node = info.NominatedNodeName
	}
	n.nominate(pi, node)
}

func (n *nominator) DeleteNominatedPodIfExists(pod *v1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.deleteLocked(pod.UID)
}

func (n *nominator) UpdateNominatedPod(logger klog.Logger, _ *v1.Pod, pi fwk.PodInfo) {
	n.AddNominatedPod(logger, pi, nil)
}

func (n *nominator) NominatedPodsForNode(node string) []fwk.PodInfo {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return append([]fwk.PodInfo(nil), n.byNode[node]...)
}

// nominatedNode is the node `uid` is nominated to, "" when none.
func (n *nominator) nominatedNode(uid types.UID) string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.nodeOf[uid]
}
