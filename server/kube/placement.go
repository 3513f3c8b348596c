package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cairn-dev/cairn"
)

// A ReadWriteOnce volume is attached to one node at a time: a second pod
// of the workspace scheduled elsewhere would wait on a Multi-Attach error
// until its start timeout. So every pod cairn makes for a workspace is
// pinned, before it is created, to the node that holds the workspace's
// volume — the node of a pod that mounts the claim, else the one node the
// bound volume's own node affinity names (a local disk's) — and refused at
// once, naming that node, when the node cannot take it. With
// ReadWriteMany pods go anywhere; a volume held nowhere yet is placed by
// the scheduler, and its first pod decides for the rest.

// hostnameLabel is the node label the scheduler and local volumes name a
// node by.
const hostnameLabel = "kubernetes.io/hostname"

// place pins pod to the node of the workspace volume it mounts. Reasons:
// volume_node_unavailable, docker_unavailable.
func (c *cluster) place(ctx context.Context, pod *corev1.Pod) error {
	claim := claimOf(pod)
	if claim == "" {
		return nil
	}
	name, err := c.podNode(ctx, claim)
	if err != nil || name == "" {
		return err
	}
	pinTo(pod, name)
	return nil
}

// VolumeIssue is volume_node_unavailable, naming the node, while the node
// holding the volume cannot take pods; nil when it can, when no node holds
// the volume yet, with ReadWriteMany, and without the grant to read nodes
// and volumes (this server cannot tell). The maintainer asks it of every
// READY workspace each pass, so it writes nothing and reads only what
// place reads. Reasons: docker_unavailable.
func (r *Runtime) VolumeIssue(ctx context.Context, name string) (*cairn.Error, error) {
	claim, err := objectName(name)
	if err != nil {
		return nil, err
	}
	_, err = r.podNode(ctx, claim)
	var issue *cairn.Error
	if errors.As(err, &issue) && issue.Reason == cairn.ReasonVolumeNodeUnavailable {
		return issue, nil
	}
	return nil, err
}

// podNode is the node a pod mounting claim must run on, "" when any node
// will do (ReadWriteMany, or no node holds the volume yet). Reasons:
// volume_node_unavailable (that node cannot take pods now),
// docker_unavailable.
func (c *cluster) podNode(ctx context.Context, claim string) (string, error) {
	if c.cfg.AccessMode == corev1.ReadWriteMany {
		return "", nil
	}
	name, node, err := c.volumeNode(ctx, claim)
	if err != nil || name == "" {
		return "", err
	}
	if node != nil {
		if err := c.takesPods(node); err != nil {
			return "", err
		}
	}
	return name, nil
}

// claimOf is the claim of the workspace volume pod mounts, "" if none.
func claimOf(pod *corev1.Pod) string {
	for _, v := range pod.Spec.Volumes {
		if v.Name == workspaceVolumeName && v.PersistentVolumeClaim != nil {
			return v.PersistentVolumeClaim.ClaimName
		}
	}
	return ""
}

// volumeNode names the node holding claim's volume — the node of a pod
// that mounts it, else the node its bound volume's affinity names — and
// returns it as the API has it. The name is "" when no node holds the
// volume yet. Without the optional grant to read volumes and nodes only a
// mounting pod names one, and the node is nil (the scheduler still honours
// a volume's affinity; only the early refusal is lost). Reasons:
// volume_node_unavailable, docker_unavailable.
func (c *cluster) volumeNode(ctx context.Context, claim string) (string, *corev1.Node, error) {
	name, err := c.mountingNode(ctx, claim)
	if err != nil {
		return "", nil, err
	}
	if name != "" {
		node, err := c.api.nodes().Get(ctx, name, getOpts)
		if apierrors.IsNotFound(err) {
			return "", nil, nodeUnavailable(name, "is no longer in the cluster")
		}
		node, err = c.readable(node, err)
		return name, node, err
	}
	host, err := c.boundHost(ctx, claim)
	if err != nil || host == "" {
		return "", nil, err
	}
	list, err := c.api.nodes().List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{hostnameLabel: host}).String()})
	switch {
	case err != nil:
		_, err = c.readable(nil, err)
		return "", nil, err
	case len(list.Items) == 0:
		return "", nil, nodeUnavailable(host, "is no longer in the cluster")
	}
	return list.Items[0].Name, &list.Items[0], nil
}

// readable passes node on, or turns a refusal to read it into no node (and
// a warning, once) and any other failure into docker_unavailable.
func (c *cluster) readable(node *corev1.Node, err error) (*corev1.Node, error) {
	switch {
	case apierrors.IsForbidden(err):
		c.placement.warnOnce(c.log, err)
		return nil, nil
	case err != nil:
		return nil, unavailable("read the workspace volume's node", err)
	}
	return node, nil
}

// mountingNode is the node of a pod of cairn's that mounts claim and has
// not ended.
func (c *cluster) mountingNode(ctx context.Context, claim string) (string, error) {
	list, err := c.api.pods(c.cfg.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{LabelApp: c.cfg.AppName}).String()})
	if err != nil {
		return "", unavailable("list pods", err)
	}
	for i := range list.Items {
		pod := &list.Items[i]
		ended := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
		if pod.Spec.NodeName != "" && !ended && claimOf(pod) == claim {
			return pod.Spec.NodeName, nil
		}
	}
	return "", nil
}

// boundHost is the one hostname the node affinity of claim's bound volume
// requires, "" for an unbound claim, a volume any node of a zone can
// attach, or one this server may not read.
func (c *cluster) boundHost(ctx context.Context, claim string) (string, error) {
	pvc, err := c.api.claims(c.cfg.Namespace).Get(ctx, claim, getOpts)
	switch {
	case apierrors.IsNotFound(err):
		return "", nil // the pod's start reports the missing claim
	case err != nil:
		return "", unavailable("read the volume claim", err)
	case pvc.Spec.VolumeName == "":
		return "", nil
	}
	pv, err := c.api.volumes().Get(ctx, pvc.Spec.VolumeName, getOpts)
	switch {
	case apierrors.IsForbidden(err):
		c.placement.warnOnce(c.log, err)
		return "", nil
	case apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", unavailable("read the persistent volume", err)
	}
	return affinityHost(pv.Spec.NodeAffinity), nil
}

// affinityHost is the single hostname a volume's node affinity requires,
// "" when it names none or more than one.
func affinityHost(a *corev1.VolumeNodeAffinity) string {
	if a == nil || a.Required == nil || len(a.Required.NodeSelectorTerms) != 1 {
		return ""
	}
	for _, e := range a.Required.NodeSelectorTerms[0].MatchExpressions {
		if e.Key == hostnameLabel && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 {
			return e.Values[0]
		}
	}
	return ""
}

// takesPods refuses a node that is cordoned, not ready or outside
// kubernetes.nodeSelector. Reasons: volume_node_unavailable.
func (c *cluster) takesPods(node *corev1.Node) error {
	switch {
	case node.Spec.Unschedulable:
		return nodeUnavailable(node.Name, "is cordoned")
	case !nodeReady(node):
		return nodeUnavailable(node.Name, "is not ready")
	case !labels.SelectorFromSet(c.cfg.NodeSelector).Matches(labels.Set(node.Labels)):
		return nodeUnavailable(node.Name, "is outside kubernetes.nodeSelector")
	}
	return nil
}

func nodeReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

func nodeUnavailable(node, why string) error {
	return cairn.Errorf(cairn.ReasonVolumeNodeUnavailable,
		"the workspace's volume is on node %s, which %s; its pods can run only there, once it takes pods again", node, why)
}

// pinTo adds a required node affinity to the node named node (by its
// object name, as the scheduler matches metadata.name).
func pinTo(pod *corev1.Pod, node string) {
	term := corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{
		Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}}}
}

// placementGrant remembers that the missing grant to read volumes or
// nodes was logged.
type placementGrant struct{ once sync.Once }

func (g *placementGrant) warnOnce(log *slog.Logger, err error) {
	g.once.Do(func() {
		log.Warn("cannot read persistent volumes or nodes: a workspace's pods are pinned to its volume's node only while one of them runs, "+
			"and a node that is down is found only when a pod does not start (grant it with cluster-reader.yaml)", "err", fmt.Sprint(err))
	})
}
