/** The two hand-built SVG charts: open jobs by time left to their deadline, and activity over the last hour. */
import { s } from './dom.js';
import { bound, plural } from './format.js';

/** Horizontal bars of open jobs by time left; the bars inside the at-risk window in red. */
export function deadlineChart(bars) {
  const width = 640;
  const rowHeight = 28;
  const labelWidth = 70;
  const max = Math.max(1, ...bars.map((b) => b.count));
  const svg = s('svg', {
    class: 'chart',
    id: 'deadline-chart',
    viewBox: `0 0 ${width} ${bars.length * rowHeight + 4}`,
    role: 'img',
    'aria-label': `open jobs by time left to their deadline: ${bars.map((b) => `${bound(b.withinMs)} ${b.count}`).join(', ')}`,
  });
  bars.forEach((bar, i) => {
    const y = i * rowHeight + 2;
    const barWidth = Math.round(((width - labelWidth - 60) * bar.count) / max);
    svg.append(
      s('text', { x: 0, y: y + 17 }, bound(bar.withinMs)),
      s('rect', {
        class: bar.atRisk ? 'bar at-risk' : 'bar',
        x: labelWidth,
        y,
        width: Math.max(bar.count > 0 ? 2 : 0, barWidth),
        height: rowHeight - 8,
        'data-count': bar.count,
      }),
      s('text', { x: labelWidth + barWidth + 6, y: y + 17 }, String(bar.count)),
    );
  });
  svg.append(
    s('line', { class: 'axis', x1: labelWidth, x2: labelWidth, y1: 0, y2: bars.length * rowHeight }),
  );
  return svg;
}

/**
 * Delivered (up) and failed (down) jobs per minute over the last hour; a minute nobody watched is a
 * grey tick on the axis (its counts are unknown).
 */
export function activityChart(activity) {
  const { buckets } = activity;
  const width = 640;
  const half = 50;
  const step = width / buckets.length;
  const max = Math.max(1, ...buckets.map((b) => Math.max(b.delivered, b.failed)));
  const delivered = buckets.reduce((n, b) => n + b.delivered, 0);
  const failed = buckets.reduce((n, b) => n + b.failed, 0);
  const watched = buckets.filter((b) => b.watched).length;
  const svg = s('svg', {
    class: 'chart activity',
    id: 'activity-chart',
    viewBox: `0 0 ${width} ${2 * half + 4}`,
    role: 'img',
    'aria-label': `last hour: ${plural(delivered, 'job')} delivered, ${failed} failed, ${watched} of ${buckets.length} minutes watched`,
  });
  buckets.forEach((b, i) => {
    const x = i * step + 1;
    const w = Math.max(1, step - 2);
    if (!b.watched) {
      svg.append(s('rect', { class: 'unwatched', x, y: half - 1, width: w, height: 2 }));
      return;
    }
    const up = Math.round((half * b.delivered) / max);
    const down = Math.round((half * b.failed) / max);
    svg.append(
      s('rect', {
        class: 'delivered',
        x,
        y: half - up,
        width: w,
        height: up,
        'data-at': b.at,
        'data-count': b.delivered,
      }),
      s('rect', {
        class: 'failed',
        x,
        y: half + 2,
        width: w,
        height: down,
        'data-at': b.at,
        'data-count': b.failed,
      }),
    );
  });
  svg.append(s('line', { class: 'axis', x1: 0, x2: width, y1: half + 1, y2: half + 1 }));
  return svg;
}
