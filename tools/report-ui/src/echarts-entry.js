// The parts of ECharts the offline report uses, bundled into one minified file
// (vendor/echarts.report.min.js) that exposes them as the global `echarts`.
import * as echarts from 'echarts/core';
import { CustomChart, LineChart, BarChart } from 'echarts/charts';
import {
  GridComponent, TooltipComponent, DataZoomComponent, LegendComponent, TitleComponent,
  MarkLineComponent,
} from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([
  CustomChart, LineChart, BarChart, GridComponent, TooltipComponent, DataZoomComponent,
  LegendComponent, TitleComponent, MarkLineComponent, CanvasRenderer,
]);
window.echarts = echarts;
