/**
 * One document node: its component by type, inside its own error boundary, with its children
 * keyed by node id so an unchanged branch keeps its elements across frames and keystrokes.
 */

import { html, h } from '../ui.js';
import { NodeBoundary } from './boundary.js';
import { Chart } from './chart.js';
import { Badge, ErrorMessage, Heading, Loading, Markdown, Progress, Result, Text } from './display.js';
import { Button, Checkbox, Input, NumberInput, Select, Slider } from './inputs.js';
import { Card, Column, Form, Grid, Row } from './layout.js';
import { useScope } from './scope.js';
import { Table } from './table.js';

/** The 21 components of DSL 1.0/1.1, by type name (a Map: no prototype lookups). */
export const COMPONENTS = new Map(Object.entries({
  Text, Heading, Markdown, Row, Column, Grid, Card, Badge, Table, Progress, Chart,
  Input, NumberInput, Select, Button, Slider, Checkbox, Form, Loading, Error: ErrorMessage, Result,
}));

/** @param {{node: Record<string, any>}} props */
function NodeBody({ node }) {
  const component = COMPONENTS.get(node.type);
  if (!component) throw new TypeError('unknown component');
  const children = Array.isArray(node.children)
    ? node.children.map((/** @type {any} */ child) => html`<${NodeView} key=${child.id} node=${child} />`)
    : undefined;
  return h(component, { node }, children);
}

/** A node and its subtree, isolated by an error boundary. @param {{node: Record<string, any>}} props */
export function NodeView({ node }) {
  const scope = useScope();
  return html`<${NodeBoundary} node=${node} version=${scope.version}>
    <div class="node" data-node=${node.id} data-type=${node.type}><${NodeBody} node=${node} /></div>
  </${NodeBoundary}>`;
}
