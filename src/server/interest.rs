//! Interest management (S2), sans-IO: which entities each client hears
//! about. Entities are placed on a grid of square cells on the ground
//! plane (x, z; Y is up) from their positions, or in an explicit region
//! that their holder names. A client sees the cells within its view
//! radius of each entity it controls, the regions it subscribes to, or
//! everything with a global view; an entity may also ask for a least
//! device class. An entity leaves a view only one cell beyond the radius,
//! so that one moving along a cell border does not flicker in and out.

use std::collections::hash_map::Entry;

use foldhash::HashMap;

use glam::Vec3;

use crate::wire::message::InterestSpec;

/// A grid cell on the ground plane.
pub type Cell = (i32, i32);

/// Where an entity is matched and who may see it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Placement {
    /// Grid cell from the last known position (None: no position yet, or
    /// the grid is off).
    cell: Option<Cell>,
    /// Explicit region (0: matched by cell).
    region: u32,
    /// Least device class that sees the entity.
    min_class: u8,
}

/// The relay's index of entity placements.
#[derive(Debug, Default)]
pub struct InterestIndex {
    /// Cell edge in metres; 0 turns the grid off (regions and global views
    /// still work).
    cell_size: f32,
    placements: HashMap<u64, Placement>,
    cells: HashMap<Cell, Vec<u64>>,
    regions: HashMap<u32, Vec<u64>>,
    /// Counts changes to which entities the index holds or where a region
    /// puts them (not moves between cells): views older than the latest
    /// one must be recomputed now, not at their next refresh.
    changes: u64,
}

fn unlist<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Vec<u64>>, key: K, entity: u64) {
    if let Some(list) = map.get_mut(&key) {
        if let Some(i) = list.iter().position(|&e| e == entity) {
            list.swap_remove(i);
        }
        if list.is_empty() {
            map.remove(&key);
        }
    }
}

fn chebyshev(a: Cell, b: Cell) -> u32 {
    (a.0.abs_diff(b.0)).max(a.1.abs_diff(b.1))
}

impl InterestIndex {
    pub fn new(cell_size: f32) -> Self {
        InterestIndex {
            cell_size: if cell_size.is_finite() && cell_size > 0.0 {
                cell_size
            } else {
                0.0
            },
            ..Default::default()
        }
    }

    /// The cell of a position, when the grid is on.
    pub fn cell_of(&self, position: Vec3) -> Option<Cell> {
        if self.cell_size <= 0.0 || !position.is_finite() {
            return None;
        }
        let c = |v: f32| {
            (v / self.cell_size)
                .floor()
                .clamp(i32::MIN as f32, i32::MAX as f32) as i32
        };
        Some((c(position.x), c(position.z)))
    }

    pub fn contains(&self, entity: u64) -> bool {
        self.placements.contains_key(&entity)
    }

    pub fn len(&self) -> usize {
        self.placements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.placements.is_empty()
    }

    /// Every indexed entity.
    pub fn entities(&self) -> impl Iterator<Item = u64> + '_ {
        self.placements.keys().copied()
    }

    /// Changes so far to which entities the index holds or their regions.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// Indexes `entity` (if new) and moves it to the cell of `position`.
    pub fn place(&mut self, entity: u64, position: Option<Vec3>) {
        let cell = position.and_then(|p| self.cell_of(p));
        let placement = match self.placements.entry(entity) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => {
                self.changes += 1;
                v.insert(Placement::default())
            }
        };
        if placement.region != 0 || (placement.cell == cell && cell.is_some()) {
            return;
        }
        let old = placement.cell;
        if cell.is_none() && old.is_some() {
            // No new position: keep the last cell.
            return;
        }
        if old.is_none() && cell.is_some() {
            self.changes += 1; // first seen in a cell
        }
        placement.cell = cell;
        if let Some(old) = old {
            unlist(&mut self.cells, old, entity);
        }
        if let Some(cell) = cell {
            self.cells.entry(cell).or_default().push(entity);
        }
    }

    /// Puts `entity` in an explicit `region` (0: back on the grid) and
    /// sets the least device class that sees it.
    pub fn set_region(&mut self, entity: u64, region: u32, min_class: u8) {
        self.changes += 1;
        let placement = *self.placements.entry(entity).or_default();
        if placement.region != 0 {
            unlist(&mut self.regions, placement.region, entity);
        } else if let Some(cell) = placement.cell {
            unlist(&mut self.cells, cell, entity);
        }
        let p = self.placements.get_mut(&entity).expect("inserted above");
        p.region = region;
        p.min_class = min_class;
        if region != 0 {
            self.regions.entry(region).or_default().push(entity);
        } else if let Some(cell) = p.cell {
            self.cells.entry(cell).or_default().push(entity);
        }
    }

    pub fn remove(&mut self, entity: u64) {
        if let Some(p) = self.placements.remove(&entity) {
            self.changes += 1;
            if p.region != 0 {
                unlist(&mut self.regions, p.region, entity);
            } else if let Some(cell) = p.cell {
                unlist(&mut self.cells, cell, entity);
            }
        }
    }

    /// The grid cell an entity is in (for a client's focus).
    pub fn cell(&self, entity: u64) -> Option<Cell> {
        self.placements
            .get(&entity)
            .filter(|p| p.region == 0)
            .and_then(|p| p.cell)
    }

    /// Fills `out` (sorted, no repeats) with what a client with `spec`,
    /// centred on `focus` cells, sees now; `before` (sorted) is what it
    /// saw at the last tick, kept up to one cell past the radius.
    pub fn visible(&self, spec: &InterestSpec, focus: &[Cell], before: &[u64], out: &mut Vec<u64>) {
        out.clear();
        let class_ok = |e: &u64| {
            self.placements
                .get(e)
                .is_some_and(|p| p.min_class <= spec.device_class)
        };
        if spec.global_view {
            out.extend(self.placements.keys().copied().filter(class_ok));
        } else {
            let reach = spec.radius as i32 + 1;
            for &f in focus {
                for dx in -reach..=reach {
                    for dz in -reach..=reach {
                        let cell = (f.0.saturating_add(dx), f.1.saturating_add(dz));
                        let Some(list) = self.cells.get(&cell) else {
                            continue;
                        };
                        let near = chebyshev(cell, f) <= spec.radius;
                        out.extend(
                            list.iter().copied().filter(|e| {
                                (near || before.binary_search(e).is_ok()) && class_ok(e)
                            }),
                        );
                    }
                }
            }
            for region in &spec.regions {
                if let Some(list) = self.regions.get(region) {
                    out.extend(list.iter().copied().filter(class_ok));
                }
            }
        }
        out.sort_unstable();
        out.dedup();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(radius: u32, regions: Vec<u32>) -> InterestSpec {
        InterestSpec {
            global_view: false,
            device_class: 0,
            radius,
            regions,
        }
    }

    fn seen(index: &InterestIndex, s: &InterestSpec, focus: &[Cell], before: &[u64]) -> Vec<u64> {
        let mut before = before.to_vec();
        before.sort_unstable();
        let mut out = Vec::new();
        index.visible(s, focus, &before, &mut out);
        out
    }

    #[test]
    fn cells_radius_hysteresis_and_regions() {
        let mut index = InterestIndex::new(10.0);
        index.place(1, Some(Vec3::new(5.0, 0.0, 5.0))); // (0, 0)
        index.place(2, Some(Vec3::new(15.0, 100.0, 5.0))); // (1, 0): height is ignored
        index.place(3, Some(Vec3::new(25.0, 0.0, -5.0))); // (2, -1)
        index.place(4, Some(Vec3::new(-500.0, 0.0, 0.0)));
        index.set_region(5, 9, 0);
        let focus = [index.cell(1).unwrap()];
        assert_eq!(seen(&index, &spec(0, vec![]), &focus, &[]), vec![1]);
        assert_eq!(seen(&index, &spec(1, vec![]), &focus, &[]), vec![1, 2]);
        // 3 is two cells away: only kept when it was seen before.
        assert_eq!(seen(&index, &spec(1, vec![]), &focus, &[3]), vec![1, 2, 3]);
        assert_eq!(seen(&index, &spec(1, vec![9]), &focus, &[]), vec![1, 2, 5]);
        // Moving across cells updates the index.
        index.place(4, Some(Vec3::new(1.0, 0.0, 1.0)));
        assert_eq!(seen(&index, &spec(0, vec![]), &focus, &[]), vec![1, 4]);
        index.remove(4);
        assert_eq!(seen(&index, &spec(0, vec![]), &focus, &[]), vec![1]);
        // A region takes the entity off the grid, and 0 puts it back.
        index.set_region(1, 7, 0);
        assert_eq!(
            seen(&index, &spec(0, vec![]), &focus, &[]),
            Vec::<u64>::new()
        );
        assert_eq!(seen(&index, &spec(0, vec![7]), &[], &[]), vec![1]);
        index.set_region(1, 0, 0);
        assert_eq!(seen(&index, &spec(0, vec![]), &focus, &[]), vec![1]);
    }

    #[test]
    fn device_class_gates_even_a_global_view() {
        let mut index = InterestIndex::new(10.0);
        index.place(1, Some(Vec3::ZERO));
        index.place(2, Some(Vec3::ZERO));
        index.set_region(2, 0, 3);
        let mut global = InterestSpec::default();
        assert_eq!(seen(&index, &global, &[], &[]), vec![1]);
        global.device_class = 3;
        assert_eq!(seen(&index, &global, &[], &[]), vec![1, 2]);
        let mut near = spec(0, vec![]);
        assert_eq!(seen(&index, &near, &[(0, 0)], &[]), vec![1]);
        near.device_class = 5;
        assert_eq!(seen(&index, &near, &[(0, 0)], &[]), vec![1, 2]);
    }

    #[test]
    fn no_grid_means_regions_and_global_views_only() {
        let mut index = InterestIndex::new(0.0);
        index.place(1, Some(Vec3::ZERO));
        assert_eq!(index.cell(1), None);
        assert_eq!(
            seen(&index, &spec(3, vec![]), &[(0, 0)], &[]),
            Vec::<u64>::new()
        );
        assert_eq!(seen(&index, &InterestSpec::default(), &[], &[]), vec![1]);
    }
}
