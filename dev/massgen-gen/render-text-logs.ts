// massgen.log (loguru "HH:mm:ss | LEVEL    | message") and agent_outputs/.
import { clockTime } from './clock.ts';
import type { AttemptRecord } from './model.ts';

export function renderMassgenLog(rec: AttemptRecord): string {
  return rec.logLines
    .map((line) => {
      const [at = '0', level = 'INFO', ...rest] = line.split('\t');
      return `${clockTime(Number(at))} | ${level.padEnd(8)} | ${rest.join('\t')}\n`;
    })
    .join('');
}

export interface OutputFile {
  path: string;
  content?: string;
  symlinkTo?: string;
}

export function agentOutputFiles(rec: AttemptRecord): OutputFile[] {
  const files: OutputFile[] = rec.agents.map((a) => ({ path: `${a}.txt`, content: rec.outputs[a] ?? '' }));
  files.push({ path: 'system_status.txt', content: '=== SYSTEM STATUS LOG ===\n\n' });
  if (rec.mode === 'interactive' && rec.final) {
    const name = `final_presentation_${rec.final.winner}.txt`;
    files.push({ path: name, content: `${rec.final.text}\n` });
    files.push({ path: `final_presentation_${rec.final.winner}_latest.txt`, symlinkTo: name });
  }
  return files;
}
