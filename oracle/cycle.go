package main

// One scheduling cycle, as kube-scheduler's schedulingCycle, schedulePod and
// findNodesThatFitPod run it (serially, every node evaluated: what
// percentageOfNodesToScore 100 does), through the framework's exported Run*
// methods. Besides the outcome it records, for kschedx's result document,
// what kube-scheduler computes but does not keep: every Filter plugin's
// verdict on every node (each plugin's own Filter called per node, after
// the cycle's PreFilter), each PreFilter plugin's status, and each Score
// plugin's raw and normalized score.

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

const (
	oneFeasibleNote = "only one feasible node: kube-scheduler selects it without scoring (scores shown for information)"
	// The scheduler's ErrNoNodesAvailable.
	noNodesMessage = "no nodes available to schedule pods"
)

// podResult is one pod's cycle: the fields of its entry in the result
// document, and what simulate applies.
type podResult struct {
	pod             *v1.Pod
	status          string // Scheduled | Unschedulable | Gated | Error | NoProfile
	selected        string
	top             []string
	message         *string
	gate            map[string]any
	preFilter       []map[string]any
	preFilterResult map[string]any
	nodes           []map[string]any
	preemption      map[string]any
	notes           []string
	placed          string

	state fwk.CycleState
	// PostFilter's nomination: nil leaves the pod's nomination as it is,
	// "" clears it.
	nominated *string
	victims   []*v1.Pod
}

func strPtr(s string) *string { return &s }

func statusDict(st *fwk.Status, plugin string) map[string]any {
	reasons := []string{}
	if st != nil {
		reasons = append(reasons, st.Reasons()...)
	}
	return map[string]any{"code": st.Code().String(), "plugin": plugin, "reasons": reasons}
}

// cycle holds one pod's scheduling cycle.
type cycle struct {
	e     *env
	p     *profile
	pod   *v1.Pod
	state *framework.CycleState
	res   *podResult
	// the snapshot's nodes, in its order (the node tree's)
	allNodes []fwk.NodeInfo
}

// schedule runs one cycle for `pod` and returns its result; nothing of the
// cluster changes (simulate applies the result, simulate.go).
func (e *env) schedule(pod *v1.Pod) *podResult {
	res := &podResult{pod: pod, top: []string{}, preFilter: []map[string]any{}, nodes: []map[string]any{}}
	p := e.profileFor(pod)
	if p == nil {
		// kube-scheduler leaves the pod to another scheduler; kschedx says so.
		served := make([]string, 0, len(e.profiles))
		for _, other := range e.profiles {
			served = append(served, other.name)
		}
		res.status = "NoProfile"
		res.message = strPtr(fmt.Sprintf("no profile serves schedulerName %q (this configuration's profiles: %s): "+
			"kube-scheduler leaves the pod to another scheduler", pod.Spec.SchedulerName, strings.Join(served, ", ")))
		return res
	}
	// PreEnqueue: the queue keeps a gated pod out of every cycle.
	for _, pl := range p.fw.PreEnqueuePlugins() {
		if st := pl.PreEnqueue(e.ctx, pod); !st.IsSuccess() {
			res.status = "Gated"
			res.gate = statusDict(st, pl.Name())
			res.message = strPtr(st.Message())
			return res
		}
	}
	if err := e.cache.UpdateSnapshot(e.logger, e.snapshot); err != nil {
		res.status = "Error"
		res.message = strPtr(err.Error())
		return res
	}
	c := &cycle{e: e, p: p, pod: pod, state: framework.NewCycleState(), res: res}
	res.state = c.state
	c.run()
	return res
}

func (c *cycle) fail(err error) {
	c.res.status = "Error"
	c.res.message = strPtr(err.Error())
	c.res.nodes = []map[string]any{}
	c.res.selected = ""
	c.res.top = []string{}
	c.res.preemption = nil
}

func (c *cycle) run() {
	e, p, pod, state := c.e, c.p, c.pod, c.state
	ctx := e.ctx
	all, err := e.snapshot.NodeInfos().List()
	if err != nil {
		c.fail(err)
		return
	}
	c.allNodes = all
	if len(all) == 0 {
		c.res.status = "Unschedulable"
		c.res.message = strPtr(noNodesMessage)
		return
	}
	c.recordPreFilter()
	preRes, s, narrowing := p.fw.RunPreFilterPlugins(ctx, state, pod)
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus(), UnschedulablePlugins: narrowing}
	if !s.IsSuccess() {
		if !s.IsRejected() {
			c.fail(s.AsError())
			return
		}
		// Every node gets the rejection; no Filter runs.
		diagnosis.NodeToStatus.SetAbsentNodesStatus(s)
		diagnosis.PreFilterMsg = s.Message()
		diagnosis.AddPluginStatus(s)
		var first any
		if s.Plugin() != "" {
			first = s.Plugin()
		}
		for _, name := range sortedNames(all) {
			c.res.nodes = append(c.res.nodes, map[string]any{
				"name": name, "feasible": false, "filters": []map[string]any{},
				"firstFailure": first, "status": statusDict(s, s.Plugin()),
			})
		}
		c.fitError(&diagnosis)
		return
	}

	// The nodes the PreFilterResult leaves (all when it has none).
	candidates := all
	var candidateSet sets.Set[string]
	var absent *fwk.Status
	narrowed := sets.List(narrowing)
	if !preRes.AllNodes() {
		candidateSet = preRes.NodeNames
		candidates = nil
		for _, ni := range all {
			if candidateSet.Has(ni.Node().Name) {
				candidates = append(candidates, ni)
			}
		}
		absent = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", narrowed))
		c.res.preFilterResult = map[string]any{"nodeNames": sets.List(preRes.NodeNames), "plugins": narrowed}
	}

	// The nominated node (from an earlier preemption) is tried first; when
	// it fits, no other node is filtered or scored.
	real := map[string]*fwk.Status{} // outcomes of the nodes kube-scheduler filtered
	var feasible []fwk.NodeInfo
	nominatedFits := false
	nominatedNode := ""
	if nnn := pod.Status.NominatedNodeName; nnn != "" {
		if ni, err := e.snapshot.Get(nnn); err == nil {
			nominatedNode = nnn
			st := p.fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if st.IsSuccess() {
				feasible = []fwk.NodeInfo{ni}
				nominatedFits = true
				real[nnn] = nil
			} else if st.IsRejected() {
				diagnosis.NodeToStatus.Set(nnn, st)
				diagnosis.AddPluginStatus(st)
				real[nnn] = st
			}
			// An error on the nominated node is logged, and the search goes on.
		}
	}
	if !nominatedFits {
		if absent != nil {
			diagnosis.NodeToStatus.SetAbsentNodesStatus(absent)
		}
		for _, ni := range candidates {
			name := ni.Node().Name
			st := p.fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if st.Code() == fwk.Error {
				c.fail(st.AsError())
				return
			}
			real[name] = st
			if st.IsSuccess() {
				feasible = append(feasible, ni)
			} else {
				diagnosis.NodeToStatus.Set(name, st)
				diagnosis.AddPluginStatus(st)
			}
		}
	}

	// Every node's record: each Filter plugin's verdict, and the outcome.
	records := map[string]map[string]any{}
	for _, ni := range all {
		name := ni.Node().Name
		filters, firstSt, firstPlugin := c.evaluateFilters(ni)
		rec := map[string]any{"name": name, "filters": filters}
		st, filtered := real[name]
		switch {
		case candidateSet != nil && !candidateSet.Has(name) && name != nominatedNode:
			// Left out by the PreFilterResult: that is its status.
			rec["feasible"] = false
			rec["status"] = statusDict(absent, "")
			rec["firstFailure"] = joinNames(narrowed)
		case filtered:
			if st.IsSuccess() {
				rec["feasible"] = true
				rec["firstFailure"] = nil
			} else {
				rec["feasible"] = false
				rec["status"] = statusDict(st, st.Plugin())
				rec["firstFailure"] = st.Plugin()
			}
		default:
			// Not filtered by kube-scheduler (the nominated node fitted):
			// the outcome of the verdicts recorded.
			if firstSt == nil {
				rec["feasible"] = true
				rec["firstFailure"] = nil
			} else {
				rec["feasible"] = false
				rec["status"] = statusDict(firstSt, firstPlugin)
				rec["firstFailure"] = firstPlugin
			}
		}
		records[name] = rec
	}
	defer func() {
		names := make([]string, 0, len(records))
		for n := range records {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			c.res.nodes = append(c.res.nodes, records[n])
		}
	}()

	if len(feasible) == 0 {
		c.fitError(&diagnosis)
		return
	}
	if len(feasible) == 1 {
		// kube-scheduler takes the only feasible node without scoring; its
		// scores are still shown, for information.
		name := feasible[0].Node().Name
		if nominatedFits {
			c.res.notes = append(c.res.notes, fmt.Sprintf(
				"nominated node %s passed the filters: kube-scheduler selects it without looking at other nodes or scoring", name))
		} else {
			c.res.notes = append(c.res.notes, oneFeasibleNote)
		}
		if _, err := c.score(feasible, records); err != nil {
			c.res.notes = append(c.res.notes, fmt.Sprintf("scores not available: %v", err))
		}
		c.res.status = "Scheduled"
		c.res.selected = name
		c.res.top = []string{name}
		return
	}
	totals, err := c.score(feasible, records)
	if err != nil {
		c.fail(err)
		records = map[string]map[string]any{}
		return
	}
	best := int64(-1 << 63)
	for _, t := range totals {
		if t > best {
			best = t
		}
	}
	for i, ni := range feasible {
		if totals[i] == best {
			c.res.top = append(c.res.top, ni.Node().Name)
		}
	}
	sort.Strings(c.res.top)
	c.res.status = "Scheduled"
	// Ties between equal top scores: the smallest node name.
	c.res.selected = c.res.top[0]
}

func sortedNames(nodes []fwk.NodeInfo) []string {
	names := make([]string, 0, len(nodes))
	for _, ni := range nodes {
		names = append(names, ni.Node().Name)
	}
	sort.Strings(names)
	return names
}

// joinNames is the plugins a PreFilterResult left a node out for, as
// kschedx's firstFailure names them; nil for none.
func joinNames(names []string) any {
	if len(names) == 0 {
		return nil
	}
	return strings.Join(names, ", ")
}

// recordPreFilter records each PreFilter plugin's status other than
// Success, in profile order, as far as RunPreFilterPlugins goes: it stops
// at an UnschedulableAndUnresolvable or an Error, and when the plugins'
// PreFilterResults leave no node. Each plugin runs on a cycle state of its
// own: the cycle's state is written by RunPreFilterPlugins itself.
func (c *cycle) recordPreFilter() {
	nodes := c.allNodes
	var merged *fwk.PreFilterResult
	for _, name := range c.p.preFilter {
		pl := c.p.plugins[name].(fwk.PreFilterPlugin)
		r, st := pl.PreFilter(c.e.ctx, framework.NewCycleState(), c.pod, nodes)
		if st.IsSkip() {
			c.res.preFilter = append(c.res.preFilter, statusDict(st, name))
			continue
		}
		if !st.IsSuccess() {
			c.res.preFilter = append(c.res.preFilter, statusDict(st, name))
			if st.Code() == fwk.Unschedulable {
				continue
			}
			return
		}
		merged = merged.Merge(r)
		if !merged.AllNodes() && len(merged.NodeNames) == 0 {
			return
		}
	}
}

// evaluateFilters is every Filter plugin's verdict on a node (Skip where
// PreFilter skipped the plugin), with the nominated pods of at least the
// pod's priority counted as RunFilterPluginsWithNominatedPods counts them:
// first with them; when all pass, again without. Also the first failure
// among the verdicts kept.
func (c *cycle) evaluateFilters(ni fwk.NodeInfo) ([]map[string]any, *fwk.Status, string) {
	added, state1, node1 := c.withNominatedPods(ni)
	verdicts, first, plugin := c.verdicts(state1, node1)
	if added && first == nil {
		verdicts, first, plugin = c.verdicts(c.state, ni)
	}
	return verdicts, first, plugin
}

func (c *cycle) verdicts(state fwk.CycleState, ni fwk.NodeInfo) ([]map[string]any, *fwk.Status, string) {
	out := make([]map[string]any, 0, len(c.p.filter))
	var first *fwk.Status
	firstPlugin := ""
	skip := state.GetSkipFilterPlugins()
	for _, name := range c.p.filter {
		if skip.Has(name) {
			out = append(out, statusDict(fwk.NewStatus(fwk.Skip), name))
			continue
		}
		st := c.p.plugins[name].(fwk.FilterPlugin).Filter(c.e.ctx, state, c.pod, ni)
		out = append(out, statusDict(st, name))
		if first == nil && !st.IsSuccess() {
			first, firstPlugin = st, name
		}
	}
	return out, first, firstPlugin
}

// withNominatedPods adds the pods nominated to the node with at least the
// pod's priority to a copy of the node and of the cycle state (through the
// PreFilter extensions), as the framework's addGENominatedPods does.
func (c *cycle) withNominatedPods(ni fwk.NodeInfo) (bool, fwk.CycleState, fwk.NodeInfo) {
	nominated := c.e.nominator.NominatedPodsForNode(ni.Node().Name)
	if len(nominated) == 0 {
		return false, c.state, ni
	}
	nodeOut := ni.Snapshot()
	stateOut := c.state.Clone()
	added := false
	for _, pi := range nominated {
		if podPriority(pi.GetPod()) >= podPriority(c.pod) && pi.GetPod().UID != c.pod.UID {
			nodeOut.AddPodInfo(pi)
			if st := c.p.fw.RunPreFilterExtensionAddPod(c.e.ctx, stateOut, c.pod, pi, nodeOut); !st.IsSuccess() {
				return false, c.state, ni
			}
			added = true
		}
	}
	if !added {
		return false, c.state, ni
	}
	return true, stateOut, nodeOut
}

// score runs PreScore and Score over the feasible nodes as
// prioritizeNodes does, records each plugin's raw, normalized and weighted
// score in the node records, and returns the nodes' totals.
func (c *cycle) score(feasible []fwk.NodeInfo, records map[string]map[string]any) ([]int64, error) {
	ctx, state, pod, p := c.e.ctx, c.state, c.pod, c.p
	if st := p.fw.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
		return nil, st.AsError()
	}
	nodeScores, st := p.fw.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		return nil, st.AsError()
	}
	skip := state.GetSkipScorePlugins()
	perNode := make([][]map[string]any, len(feasible))
	for _, name := range p.score {
		weight := p.weights[name]
		if skip.Has(name) {
			for i := range feasible {
				perNode[i] = append(perNode[i], map[string]any{
					"plugin": name, "raw": 0, "normalized": 0, "weight": weight, "weighted": 0, "skipped": true,
				})
			}
			continue
		}
		pl := p.plugins[name].(fwk.ScorePlugin)
		raw := make(fwk.NodeScoreList, len(feasible))
		for i, ni := range feasible {
			s, st := pl.Score(ctx, state, pod, ni)
			if !st.IsSuccess() {
				return nil, fmt.Errorf("plugin %q failed with: %v", name, st.AsError())
			}
			raw[i] = fwk.NodeScore{Name: ni.Node().Name, Score: s}
		}
		normalized := append(fwk.NodeScoreList(nil), raw...)
		if ext := pl.ScoreExtensions(); ext != nil {
			if st := ext.NormalizeScore(ctx, state, pod, normalized); !st.IsSuccess() {
				return nil, fmt.Errorf("plugin %q failed with: %v", name, st.AsError())
			}
		}
		for i := range feasible {
			weighted := pluginScore(nodeScores[i], name)
			if weighted != normalized[i].Score*weight {
				return nil, fmt.Errorf("oracle: plugin %s on node %s: the framework weighted %d, not %d x %d",
					name, raw[i].Name, weighted, normalized[i].Score, weight)
			}
			perNode[i] = append(perNode[i], map[string]any{
				"plugin": name, "raw": raw[i].Score, "normalized": normalized[i].Score, "weight": weight, "weighted": weighted,
			})
		}
	}
	totals := make([]int64, len(feasible))
	for i, ni := range feasible {
		totals[i] = nodeScores[i].TotalScore
		rec := records[ni.Node().Name]
		rec["scores"] = perNode[i]
		rec["totalScore"] = totals[i]
	}
	return totals, nil
}

func pluginScore(ns fwk.NodePluginScores, plugin string) int64 {
	for _, s := range ns.Scores {
		if s.Name == plugin {
			return s.Score
		}
	}
	return 0
}

// fitError is the cycle of a pod that fits no node: PostFilter (preemption)
// runs, and the FailedScheduling message is the FitError's.
func (c *cycle) fitError(diagnosis *framework.Diagnosis) {
	fitErr := &framework.FitError{Pod: c.pod, NumAllNodes: len(c.allNodes), Diagnosis: *diagnosis}
	c.res.status = "Unschedulable"
	if !c.p.hasPostFilter {
		c.res.message = strPtr(fitErr.Error())
		return
	}
	hooks := c.p.preemption
	if hooks != nil {
		hooks.reset()
	}
	result, st := c.p.fw.RunPostFilterPlugins(c.e.ctx, c.state, c.pod, nodeStatuses{diagnosis.NodeToStatus})
	fitErr.Diagnosis.PostFilterMsg = st.Message()
	c.res.message = strPtr(fitErr.Error())

	pre := map[string]any{"code": st.Code().String(), "message": nil, "nominatedNode": nil, "pdbViolations": 0,
		"victims": []map[string]any{}}
	if msg := st.Message(); msg != "" {
		pre["message"] = msg
	}
	if result != nil && result.NominatingInfo != nil && result.Mode() != fwk.ModeNoop {
		node := result.NominatedNodeName
		c.res.nominated = &node
		if node != "" {
			pre["nominatedNode"] = node
		}
	}
	if st.IsSuccess() && c.res.nominated != nil && *c.res.nominated != "" {
		node := *c.res.nominated
		c.res.selected = node
		if hooks != nil {
			if v, ok := hooks.victimsOn(node); ok {
				victims := []map[string]any{}
				for _, pod := range v.pods {
					victims = append(victims, map[string]any{"pod": podKey(pod), "priority": podPriority(pod)})
				}
				pre["victims"] = victims
				pre["pdbViolations"] = v.pdbViolations
				c.res.victims = v.pods
			}
		}
	}
	c.res.preemption = pre
}

// nodeStatuses is the NodeToStatusReader given to PostFilter: upstream's
// NodeToStatus, whose nodes of one status code it lists in the snapshot's
// node order (upstream ranges over a map: a random order).
type nodeStatuses struct{ m *framework.NodeToStatus }

func (n nodeStatuses) Get(name string) *fwk.Status { return n.m.Get(name) }

func (n nodeStatuses) NodesForStatusCode(lister fwk.NodeInfoLister, code fwk.Code) ([]fwk.NodeInfo, error) {
	all, err := lister.List()
	if err != nil {
		return nil, err
	}
	var out []fwk.NodeInfo
	for _, ni := range all {
		if n.m.Get(ni.Node().Name).Code() == code {
			out = append(out, ni)
		}
	}
	return out, nil
}
