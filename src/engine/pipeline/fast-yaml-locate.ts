// Places of the nodes of a document read by the fast YAML path (fast-yaml.ts), answered by JSON
// pointer as yaml-source.ts answers them from the yaml library: `pointer` for a node,
// `pointer#key` for the key of a mapping entry. When asked to locate, the fast scanner fills a
// NodeTable (flat arrays: no object per node, no string per pointer); a pointer is answered by
// walking the table from the root, one segment at a time.

/** The end given to block collections and block scalars (yaml's reaches past their first line, which is all a span shows); a small integer, so the arrays stay ones of small integers. */
export const BLOCK_END = 0x3fffffff;

/** Numbers kept per child: start, end, key start, key end (-1 in sequences), the child's container id (-1 for a scalar). */
const CHILD = 5;
/** Mappings with at least this many keys get a key index on their first lookup. */
const INDEXED_FROM = 16;

/** A JSON pointer segment (RFC 6901). */
export function escapeSegment(segment: string | number): string {
  const text = String(segment);
  return text.includes('~') || text.includes('/') ? text.replaceAll('~', '~0').replaceAll('/', '~1') : text;
}

/** The key a pointer segment stands for, or undefined for a segment escapeSegment never makes. */
function unescapeSegment(segment: string): string | undefined {
  if (!segment.includes('~')) return segment;
  const key = segment.replaceAll('~1', '/').replaceAll('~0', '~');
  return escapeSegment(key) === segment ? key : undefined;
}

/** An Int32Array with room for `size` numbers: `array` itself, or a bigger copy. */
function ensure(array: Int32Array<ArrayBuffer>, size: number): Int32Array<ArrayBuffer> {
  if (size <= array.length) return array;
  const bigger = new Int32Array(Math.max(size, array.length * 2));
  bigger.set(array);
  return bigger;
}

/** The containers of a document and their children, filled by the scanner container by container. */
export class NodeTable {
  /** CHILD numbers per child, the children of each container together, in document order. */
  private children = new Int32Array(1024);
  private childCount = 0;
  /** The key of each child of a mapping (by child number). */
  private readonly keys: string[] = [];
  /** Per container: its first child's number and how many children; mappings are listed. */
  private firsts = new Int32Array(256);
  private counts = new Int32Array(256);
  private containerCount = 0;
  private readonly mappings = new Set<number>();
  /** Children of the containers being read, gathered until their container ends (a stack: `top` children). */
  private pending = new Int32Array(256);
  private readonly pendingKeys: string[] = [];
  private top = 0;
  private readonly indexes = new Map<number, Map<string, number>>();
  private root = -1;
  private rootBounds: [number, number] | undefined;

  /** Where the children of the container starting now will gather. */
  mark(): number {
    return this.top;
  }

  /** A child of the container being read: its bounds, its key's (or -1), its container id (or -1). */
  addChild(start: number, end: number, keyStart: number, keyEnd: number, container: number, key: string): void {
    const { top } = this;
    const at = top * CHILD;
    const pending = (this.pending = ensure(this.pending, at + CHILD));
    pending[at] = start;
    pending[at + 1] = end;
    pending[at + 2] = keyStart;
    pending[at + 3] = keyEnd;
    pending[at + 4] = container;
    this.pendingKeys[top] = key;
    this.top = top + 1;
  }

  /** Ends the container whose children gathered from `mark`; returns its id. */
  close(mark: number, mapping: boolean): number {
    const { pendingKeys, keys, top } = this;
    const id = this.containerCount;
    this.firsts = ensure(this.firsts, id + 1);
    this.counts = ensure(this.counts, id + 1);
    this.firsts[id] = this.childCount;
    this.counts[id] = top - mark;
    this.containerCount = id + 1;
    if (mapping) this.mappings.add(id);
    const first = this.childCount;
    this.children = ensure(this.children, (first + top - mark) * CHILD);
    this.children.set(this.pending.subarray(mark * CHILD, top * CHILD), first * CHILD);
    for (let i = mark; i < top; i += 1) keys[first + i - mark] = pendingKeys[i] as string;
    this.childCount = first + top - mark;
    this.top = mark;
    return id;
  }

  /** The document's node: its bounds and container id (-1 for a scalar); none for an empty document. */
  setRoot(start: number, end: number, container: number): void {
    this.rootBounds = [start, end];
    this.root = container;
  }

  /** [start, end] of the node (or key) at a pointer, or undefined when there is none. */
  get(pointer: string): [number, number] | undefined {
    const isKey = pointer.endsWith('#key');
    const path = isKey ? pointer.slice(0, -4) : pointer;
    if (!this.rootBounds) return undefined;
    if (path === '') return isKey ? undefined : [this.rootBounds[0], this.rootBounds[1]];
    if (!path.startsWith('/')) return undefined;
    let container = this.root;
    let child = -1;
    let inMapping = false;
    let from = 1;
    for (;;) {
      if (container < 0) return undefined;
      const slash = path.indexOf('/', from);
      const segment = slash < 0 ? path.slice(from) : path.slice(from, slash);
      inMapping = this.mappings.has(container);
      const index = inMapping ? this.keyIndex(container, segment) : this.itemIndex(container, segment);
      if (index < 0) return undefined;
      child = ((this.firsts[container] as number) + index) * CHILD;
      container = this.children[child + 4] as number;
      if (slash < 0) break;
      from = slash + 1;
    }
    if (isKey && !inMapping) return undefined;
    const at = child + (isKey ? 2 : 0);
    return [this.children[at] as number, this.children[at + 1] as number];
  }

  private itemIndex(container: number, segment: string): number {
    const index = Number(segment);
    const count = this.counts[container] as number;
    return Number.isInteger(index) && index >= 0 && index < count && String(index) === segment ? index : -1;
  }

  private keyIndex(container: number, segment: string): number {
    const key = unescapeSegment(segment);
    if (key === undefined) return -1;
    const first = this.firsts[container] as number;
    const count = this.counts[container] as number;
    if (count < INDEXED_FROM) {
      for (let i = 0; i < count; i += 1) if (this.keys[first + i] === key) return i;
      return -1;
    }
    let index = this.indexes.get(container);
    if (!index) {
      index = new Map();
      for (let i = 0; i < count; i += 1) index.set(this.keys[first + i] as string, i);
      this.indexes.set(container, index);
    }
    return index.get(key) ?? -1;
  }
}
