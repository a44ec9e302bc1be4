// The graph view: a conversation's branches as a tree (titles and fork
// points), the compactions of the selected head with the entries each one
// covers, and the conversations it spawned or attached. The tree is drawn
// (SVG, the selected head's path from the root marked; a click or Enter on a
// branch selects it) above the same tree as a list with fork points. The
// graph is requested when the panel mounts, which happens only when the
// reader opens it: metadata never carries it.
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

/** pathTo is the selected head and the heads it forked from, up to its root. */
export function pathTo(branches: readonly Branch[], head: string): Set<string> {
  const by = new Map(branches.map((b) => [b.head, b]));
  const path = new Set<string>();
  for (let b = by.get(head); b && !path.has(b.head); b = b.forkedFrom !== undefined ? by.get(b.forkedFrom) : undefined) path.add(b.head);
  return path;
}

const ROW = 28;
const INDENT = 22;
const R = 6;

/**
 * BranchDrawing draws the branch tree: one row per branch in tree order, a
 * branch indented under the one it forked from, joined to it by an elbow.
 * The selected head's path from its root is marked; every other branch is a
 * button that selects it.
 */
export function BranchDrawing({ branches, head, onSelect, busy }: { branches: readonly Branch[]; head: string; onSelect?: (head: string) => void; busy?: boolean }) {
  const t = useCatalog();
  const rows: { node: TreeNode; depth: number; parentRow?: number }[] = [];
  const walk = (n: TreeNode, depth: number, parentRow?: number) => {
    const me = rows.length;
    rows.push({ node: n, depth, parentRow });
    for (const c of n.children) walk(c, depth + 1, me);
  };
  for (const r of branchTree(branches)) walk(r, 0);
  const path = pathTo(branches, head);
  const maxDepth = Math.max(0, ...rows.map((r) => r.depth));
  const x = (depth: number) => 12 + depth * INDENT;
  const y = (row: number) => 14 + row * ROW;
  const width = x(maxDepth) + 240;
  return (
    <svg className="graph-drawing" data-testid="graph-drawing" role="group" aria-label={t.branches} width={width} height={rows.length * ROW + 4} viewBox={`0 0 ${width} ${rows.length * ROW + 4}`}>
      {rows.map((r, i) =>
        r.parentRow === undefined ? null : (
          <path
            key={`edge-${r.node.branch.head}`}
            className={path.has(r.node.branch.head) ? 'graph-edge graph-on-path' : 'graph-edge'}
            d={`M ${x(r.depth - 1)} ${y(r.parentRow) + R} V ${y(i)} H ${x(r.depth) - R}`}
            fill="none"
          />
        ),
      )}
      {rows.map((r, i) => {
        const b = r.node.branch;
        const selected = b.head === head;
        const onPath = path.has(b.head);
        const choose = () => {
          if (!selected && !busy) onSelect?.(b.head);
        };
        return (
          <g
            key={b.head}
            className={`graph-node${onPath ? ' graph-on-path' : ''}${selected ? ' graph-node-selected' : ''}`}
            data-branch={b.head}
            role="button"
            tabIndex={selected || !onSelect ? -1 : 0}
            aria-pressed={selected}
            aria-label={selected ? `${b.label} ${t.selected}` : t.switchTo(b.label)}
            onClick={choose}
            onKeyDown={(e) => {
              if (e.key === 'Enter' || e.key === ' ') {
                e.preventDefault();
                choose();
              }
            }}
          >
            <rect x={0} y={y(i) - ROW / 2} width={width} height={ROW} className="graph-hit" />
            <circle cx={x(r.depth)} cy={y(i)} r={R} />
            <text x={x(r.depth) + R + 8} y={y(i) + 4}>
              {b.label}
              {selected ? ` ${t.selected}` : ''}
            </text>
          </g>
        );
      })}
    </svg>
  );
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
export function GraphView({ graph, onSelect, busy }: { graph: BranchGraph; onSelect?: (head: string) => void; busy?: boolean }) {
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
        <BranchDrawing branches={branches} head={graph.head} onSelect={onSelect} busy={busy} />
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
export function GraphPanel({ load, headKey, onSelect, busy }: { load: () => Promise<BranchGraph>; headKey?: string; onSelect?: (head: string) => void; busy?: boolean }) {
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
  return <GraphView graph={graph} onSelect={onSelect} busy={busy} />;
}
