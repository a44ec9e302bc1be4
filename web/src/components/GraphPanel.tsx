// The graph view: a conversation's branches as a tree (titles and fork
// points), the compactions of the selected head with the entries each one
// covers, and the conversations it spawned or attached. It is an accessible
// list, not a drawing. The graph is requested when the panel mounts, which
// happens only when the reader opens it: metadata never carries it.
import { useEffect, useState } from 'react';
import type { Branch } from '../chat/branches';
import { useCatalog } from '../i18n/catalog';
import { useLatest } from '../useLatest';

/** The graph response (docs/protocol.md, "Graph"). */
export interface BranchGraph {
  id: string;
  head: string;
  branches: Branch[];
  compactions: { entryId: string; fromId: string; toId: string }[];
  links: { from: string; kind: string; conversation: string }[];
}

interface TreeNode {
  branch: Branch;
  children: TreeNode[];
}

/** branchTree nests branches under the head each forked from, in creation order; unknown parents become roots. */
export function branchTree(branches: readonly Branch[]): TreeNode[] {
  const nodes = new Map<string, TreeNode>();
  for (const b of branches) nodes.set(b.head, { branch: b, children: [] });
  const roots: TreeNode[] = [];
  for (const b of branches) {
    const n = nodes.get(b.head)!;
    const parent = b.forkedFrom !== undefined && b.forkedFrom !== b.head ? nodes.get(b.forkedFrom) : undefined;
    (parent ? parent.children : roots).push(n);
  }
  return roots;
}

function BranchItem({ node, head }: { node: TreeNode; head: string }) {
  const t = useCatalog();
  const b = node.branch;
  const selected = b.head === head;
  return (
    <li className="graph-branch" data-head={b.head} aria-current={selected ? 'true' : undefined}>
      <span className="graph-branch-label">{b.label}</span> <code className="graph-branch-id">{b.head}</code>
      {b.forkedFrom !== undefined ? (
        <span className="graph-fork">
          {' '}
          {t.forkedFrom} <code>{b.forkedFrom}</code>{' '}
          {b.after ? (
            <>
              {t.after} <code>{b.after}</code>
            </>
          ) : (
            t.atStart
          )}
        </span>
      ) : null}
      {selected ? <span className="graph-selected"> {t.selected}</span> : null}
      {node.children.length > 0 ? (
        <ul>
          {node.children.map((c) => (
            <BranchItem key={c.branch.head} node={c} head={head} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/** GraphView renders a graph response. */
export function GraphView({ graph }: { graph: BranchGraph }) {
  const t = useCatalog();
  const branches = graph.branches ?? [];
  const compactions = graph.compactions ?? [];
  const links = graph.links ?? [];
  return (
    <div className="graph-panel" data-testid="graph-panel">
      <section aria-label={t.branches}>
        <h2 className="graph-heading">
          {t.branches} <span className="graph-count">{branches.length}</span>
        </h2>
        <ul className="graph-tree">
          {branchTree(branches).map((n) => (
            <BranchItem key={n.branch.head} node={n} head={graph.head} />
          ))}
        </ul>
      </section>
      <section aria-label={t.compactions}>
        <h2 className="graph-heading">
          {t.compactions} <span className="graph-count">{compactions.length}</span>
        </h2>
        {compactions.length === 0 ? (
          <p className="graph-empty">{t.noneOnBranch}</p>
        ) : (
          <ul>
            {compactions.map((c) => (
              <li key={c.entryId} className="graph-compaction">
                <code>{c.entryId}</code> {t.summarizes} <code>{c.fromId}</code> … <code>{c.toId}</code>
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-label={t.linked}>
        <h2 className="graph-heading">
          {t.linked} <span className="graph-count">{links.length}</span>
        </h2>
        {links.length === 0 ? (
          <p className="graph-empty">{t.none}</p>
        ) : (
          <ul>
            {links.map((l, i) => (
              <li key={`${l.from}-${l.conversation}-${i}`} className="graph-link" data-kind={l.kind}>
                {l.kind === 'spawn' ? t.spawned : t.attached} <code>{l.conversation}</code> {t.from} <code>{l.from}</code>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

/**
 * GraphPanel fetches the graph when it mounts and again when the selected
 * head changes (headKey), never before it is opened.
 */
export function GraphPanel({ load, headKey }: { load: () => Promise<BranchGraph>; headKey?: string }) {
  const t = useCatalog();
  const [graph, setGraph] = useState<BranchGraph | undefined>();
  const [error, setError] = useState('');
  const loadRef = useLatest(load);
  useEffect(() => {
    let live = true;
    loadRef.current().then(
      (g) => live && (setGraph(g), setError('')),
      (e: Error) => live && setError(e.message),
    );
    return () => {
      live = false;
    };
    // load is the pane's; a new head is what makes the graph change.
  }, [headKey, loadRef]);
  if (error) return <div className="graph-panel" role="alert">{t.graphUnavailable(error)}</div>;
  if (!graph) return <div className="graph-panel" role="status">{t.graphLoading}</div>;
  return <GraphView graph={graph} />;
}
