// What the page asks the layout worker and what it answers.

export interface LayoutRequest {
  key: string;
  rankdir: 'LR' | 'TB';
  nodes: Array<{ id: string; width: number; height: number }>;
  edges: Array<[string, string]>;
}

export interface LayoutResult {
  key: string;
  nodes: Record<string, { x: number; y: number; width: number; height: number }>;
  edges: Array<{ from: string; to: string; points: Array<{ x: number; y: number }> }>;
  width: number;
  height: number;
}
