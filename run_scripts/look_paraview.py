"""A ParaView picture of an XDMF sidecar (doc/transform.md "Looking at a run"): the plane of cells
i1 = I1 (default the middle), coloured by one cell array. Run with ParaView's pvbatch
(on a machine without a display: xvfb-run -a pvbatch ...).

Usage: pvbatch look_paraview.py FILE.xmf ARRAY OUT.png [I1]
"""
import sys

from paraview.simple import ColorBy, GetActiveView, ResetCamera, SaveScreenshot, Show, Slice, \
    XDMFReader

if len(sys.argv) not in (4, 5):
    sys.exit(__doc__)
xmf, array, png = sys.argv[1:4]
grid = XDMFReader(FileNames=[xmf])
grid.UpdatePipeline()
lo, hi = grid.GetDataInformation().GetBounds()[4:6]  # z: axis 1 (slowest)
i1 = int(sys.argv[4]) if len(sys.argv) == 5 else int(hi - lo) // 2
cut = Slice(Input=grid, SliceType="Plane")
cut.SliceType.Normal = [0, 0, 1]
cut.SliceType.Origin = [0, 0, lo + i1 + 0.5]  # through the cells' centres, not their faces
cut.UpdatePipeline()
shown = Show(cut)
ColorBy(shown, ("CELLS", array))
shown.RescaleTransferFunctionToDataRange(True)
shown.SetScalarBarVisibility(GetActiveView(), True)
ResetCamera()
SaveScreenshot(png, ImageResolution=[600, 500])
print(png)
