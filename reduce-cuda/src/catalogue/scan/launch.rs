//! How a scan plan runs: the launches of LookBack's one kernel, ReduceThenScan's four and
//! LookAhead's persistent grid (with the marks of CSR offsets before it), and where LookAhead
//! falls back to LookBack's kernel (the same tiles and bits).

use super::*;

impl ScanPlan {
    /// Queues the scan of the `n > 0` items at `input` into `out` (which may be `input`), with
    /// segment starts from `layout` (its address, and the segment count of offsets).
    pub fn launch(
        &self,
        d: &mut Dispatch,
        input: u64,
        n: u64,
        out: u64,
        exclusive: bool,
        layout: (u64, u64),
    ) -> Result<()> {
        let tiles = n.div_ceil(self.tile());
        if tiles > i32::MAX as u64 {
            return Err(invalid(
                self.name,
                format!("{n} items are {tiles} tiles, past the grid's 2^31 - 1 blocks"),
            ));
        }
        let m_size = d.items().m_size;
        let look_back = ScanPlan { ahead: 0, ..*self };
        let info = &d.device.info;
        if self.ahead > 0
            && (info.compute_capability.0 < 9
                || !input.is_multiple_of(16)
                || !out.is_multiple_of(16))
        {
            // No bulk copies here, or items or outputs off a 16-byte boundary (the outputs
            // would go one by one): LookBack's kernel, the same tiles and bits.
            return look_back.launch(d, input, n, out, exclusive, layout);
        }
        if self.ahead > 0
            && self.sparse_look_back
            && scan_offsets_look_back(layout.1, n, self.tile())
        {
            // Fewer segments than tiles: LookBack's kernel, the same tiles and bits.
            return look_back.launch(d, input, n, out, exclusive, layout);
        }
        let (layout, segments) = layout;
        if self.passes {
            // ReduceThenScan's four launches (kernels/scan.cu's REDUCE-THEN-SCAN): a flag and
            // a value per tile and per group of 32 tiles, each written before it is read.
            let groups = tiles.div_ceil(32);
            let slots = (tiles + groups) as usize;
            let regions = d.carve(&[slots * 4, slots * m_size])?;
            let (flags, values) = (regions[0], regions[1]);
            let spec = self.kernels();
            let reduce = d.kernel(
                &spec,
                SCAN_REDUCE,
                self.block,
                self.dynamic_smem(),
                self.name,
            )?;
            let group_folds = d.kernel(&spec, SCAN_GROUPS, self.block, 0, self.name)?;
            let chain = d.kernel(&spec, SCAN_CHAIN, self.block, 0, self.name)?;
            let apply = d.kernel(
                &spec,
                SCAN_APPLY,
                self.block,
                self.dynamic_smem(),
                self.name,
            )?;
            let args = ScanReduceArgs {
                r#in: input,
                n,
                layout,
                segments,
                flags,
                values,
            };
            d.launch(&reduce, tiles, args)?;
            let args = ScanGroupsArgs { n, flags, values };
            let warps = (self.block / 32) as u64;
            d.launch(&group_folds, groups.div_ceil(warps), args)?;
            d.launch(&chain, 1, args)?;
            let args = ScanApplyArgs {
                r#in: input,
                n,
                out,
                exclusive: exclusive as u64,
                layout,
                segments,
                flags,
                values,
            };
            return d.launch(&apply, tiles, args);
        }
        // The tile counter (16 bytes), then an entry per tile and per group of 32 tiles (a word
        // of 16-byte parts, or a 4-byte state); the tiles' and the groups' aggregates; the
        // groups' inclusive values (kernels/scan.cu, r_tile_prefix).
        // LookAhead by offsets: a bitmap of heads, a bit an item.
        let (tiles, groups) = (tiles as usize, tiles.div_ceil(32) as usize);
        let entry_bytes = (16 * self.word_parts as usize).max(4);
        let state_bytes = 16 + (tiles + groups) * entry_bytes;
        let marks_bytes = match (self.ahead > 0, self.segments) {
            (true, Segments::Offsets) => n.div_ceil(32) as usize * 4,
            _ => 0,
        };
        let module = self.module(d.loader())?.0;
        if self.ahead > 0
            && module.entry(SCAN_AHEAD.name)?.static_smem + self.dynamic_smem()
                > d.device.info.max_shared_per_block
        {
            // Its stages do not fit a block here: LookBack's kernel.
            return look_back.launch(d, input, n, out, exclusive, (layout, segments));
        }
        // The states and the bitmap (on a 256-byte boundary of its own, as the carve's regions
        // lie) must start at zero: they lie in the scratch's words that are zero between calls,
        // and are zeroed again behind the kernels — a fill queued after the launches runs while
        // the host returns, where one queued before them would hold the first kernel back by a
        // launch's host time.
        let marks_at = state_bytes.next_multiple_of(256);
        let zero_bytes = marks_at + marks_bytes;
        let zeroed = d.zeroed(zero_bytes.div_ceil(4))?;
        let regions = d.carve(&[(tiles + groups) * m_size, groups * m_size])?;
        let launched = self.launch_tiles(
            d,
            &module,
            ScanArgs {
                r#in: input,
                n,
                out,
                exclusive: exclusive as u64,
                layout,
                segments,
                states: zeroed,
                aggregates: regions[0],
                inclusives: regions[1],
            },
            tiles as u64,
            (marks_bytes > 0).then_some(zeroed + marks_at as u64),
        );
        let cleared = d.clear_zeroed(zero_bytes);
        launched.and(cleared)
    }

    /// The single-pass kernel over `tiles` tiles with `args` (`states` zero); by offsets with
    /// LookAhead, first the heads' bitmap at `marks` (zero) from the offsets in `args.layout`,
    /// which the kernel then reads instead.
    fn launch_tiles(
        &self,
        d: &mut Dispatch,
        module: &Arc<Module>,
        mut args: ScanArgs,
        tiles: u64,
        marks: Option<u64>,
    ) -> Result<()> {
        if let Some(marks) = marks {
            let kernel = d
                .device
                .kernel(module, SCAN_MARKS, self.block, 0, self.name)?;
            let runs = (args.segments + 1).div_ceil(self.block as u64 * SCAN_MARKS_RUN);
            let marks_args = ScanMarksArgs {
                offsets: args.layout,
                segments: args.segments,
                n: args.n,
                marks,
            };
            d.launch(&kernel, runs, marks_args)?;
            args.layout = marks;
        }
        let (entry, threads) = if self.ahead > 0 {
            (
                SCAN_AHEAD,
                ahead_threads(self.block, self.m_size, self.segments),
            )
        } else {
            (SCAN_TILES, self.block)
        };
        let kernel = d
            .device
            .kernel(module, entry, threads, self.dynamic_smem(), self.name)?;
        // LookAhead: a persistent grid, as many blocks as are resident at once or as the
        // configuration asks (never more than the tiles); its blocks take their tiles from the
        // counter in order, so a block waits only on tiles that running blocks hold: any grid
        // finishes, with the same bits.
        let grid = if self.ahead > 0 {
            let blocks = match self.grid {
                Some(blocks) => blocks as u64,
                None => d.device.resident_blocks(&kernel)?,
            };
            blocks.clamp(1, tiles)
        } else {
            tiles
        };
        d.launch(&kernel, grid, args)
    }
}
