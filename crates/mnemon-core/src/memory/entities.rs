//! Project entities (tier 4, the seeds' StateManager): projects, milestones,
//! epics, stories and tasks.
//!
//! Every entity of a project takes the next number of one shared sequence,
//! as the seeds write them ("Epic #5", "Stories #10, #11, #12", "Task #15"),
//! so `#12` names exactly one thing. Priority runs from 1 (most urgent) to 5.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::types::Timestamp;
use super::{StoreError, StoreResult};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntityKind {
    Project,
    Milestone,
    Epic,
    Story,
    Task,
}

impl EntityKind {
    pub const ALL: [EntityKind; 5] = [
        EntityKind::Project,
        EntityKind::Milestone,
        EntityKind::Epic,
        EntityKind::Story,
        EntityKind::Task,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EntityKind::Project => "project",
            EntityKind::Milestone => "milestone",
            EntityKind::Epic => "epic",
            EntityKind::Story => "story",
            EntityKind::Task => "task",
        }
    }

    /// "Epic", for "Epic #5".
    pub fn title(self) -> &'static str {
        match self {
            EntityKind::Project => "Project",
            EntityKind::Milestone => "Milestone",
            EntityKind::Epic => "Epic",
            EntityKind::Story => "Story",
            EntityKind::Task => "Task",
        }
    }

    /// The kinds an entity of this kind may hang under.
    pub fn allowed_parents(self) -> &'static [EntityKind] {
        match self {
            EntityKind::Project => &[],
            EntityKind::Milestone | EntityKind::Epic => {
                &[EntityKind::Project, EntityKind::Milestone]
            }
            EntityKind::Story => &[EntityKind::Epic],
            EntityKind::Task => &[EntityKind::Story, EntityKind::Epic],
        }
    }
}

impl fmt::Display for EntityKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EntityKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        let singular = s
            .strip_suffix("ies")
            .map(|x| format!("{x}y"))
            .unwrap_or_else(|| s.trim_end_matches('s').to_string());
        EntityKind::ALL
            .into_iter()
            .find(|k| k.name() == singular)
            .ok_or_else(|| {
                format!(
                    "unknown entity type `{s}`: expected project, milestone, epic, story or task"
                )
            })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum EntityStatus {
    #[default]
    Pending,
    InProgress,
    Blocked,
    Completed,
}

impl EntityStatus {
    pub const ALL: [EntityStatus; 4] = [
        EntityStatus::Pending,
        EntityStatus::InProgress,
        EntityStatus::Blocked,
        EntityStatus::Completed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            EntityStatus::Pending => "pending",
            EntityStatus::InProgress => "in_progress",
            EntityStatus::Blocked => "blocked",
            EntityStatus::Completed => "completed",
        }
    }

    /// Work may move freely among open states; completed work is reopened
    /// to in_progress, never straight back to pending or blocked.
    pub fn can_become(self, next: EntityStatus) -> bool {
        self == next || self != EntityStatus::Completed || next == EntityStatus::InProgress
    }
}

impl fmt::Display for EntityStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for EntityStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        EntityStatus::ALL
            .into_iter()
            .find(|x| x.name() == s || (s == "done" && *x == EntityStatus::Completed))
            .ok_or_else(|| {
                format!("unknown status `{s}`: expected pending, in_progress, blocked or completed")
            })
    }
}

/// A new entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntity {
    pub kind: EntityKind,
    pub title: String,
    pub description: Option<String>,
    /// 1 (most urgent) to 5; 3 when not given.
    pub priority: Option<u8>,
    /// The parent's number.
    pub parent: Option<u64>,
}

/// A draft the store numbers and saves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityDraft {
    pub kind: EntityKind,
    pub title: String,
    pub description: Option<String>,
    pub priority: u8,
    pub parent: Option<u64>,
    pub status: EntityStatus,
    pub at: Timestamp,
}

/// Changes; `None` leaves a field alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntityChange {
    pub title: Option<String>,
    pub description: Option<String>,
    pub status: Option<EntityStatus>,
    pub priority: Option<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entity {
    pub number: u64,
    pub kind: EntityKind,
    pub title: String,
    pub description: Option<String>,
    pub status: EntityStatus,
    pub priority: u8,
    pub parent: Option<u64>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Entity {
    /// Refuses a change of status the lifecycle does not allow: completed
    /// work reopens to in_progress only.
    pub fn check_change(&self, c: &EntityChange) -> StoreResult<()> {
        match c.status {
            Some(next) if !self.status.can_become(next) => Err(StoreError::Invalid(format!(
                "{} is {}; completed work reopens to in_progress, not {next}",
                self.label(),
                self.status
            ))),
            _ => Ok(()),
        }
    }

    /// Refuses to delete an entity that still holds others, naming up to
    /// five of `children` (a backend reads six, to know there are more).
    pub fn check_deletable(&self, children: &[Entity]) -> StoreResult<()> {
        if children.is_empty() {
            return Ok(());
        }
        let shown: Vec<String> = children.iter().take(5).map(Entity::label).collect();
        Err(StoreError::Invalid(format!(
            "{} still holds {}{}; delete or move those first",
            self.label(),
            shown.join(", "),
            if children.len() > 5 { " and more" } else { "" }
        )))
    }

    /// The error of reading this entity, deleted at `at`.
    pub fn deleted(&self, at: Timestamp) -> StoreError {
        StoreError::Invalid(format!(
            "{} was deleted on {}",
            self.label(),
            at.datetime().format("%Y-%m-%d %H:%M UTC")
        ))
    }

    /// `Epic #5 "User Authentication"`.
    pub fn label(&self) -> String {
        format!("{} #{} \"{}\"", self.kind.title(), self.number, self.title)
    }
}

/// Which entities to list. Results come most urgent first, then by number.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntityQuery {
    pub kind: Option<EntityKind>,
    pub status: Option<EntityStatus>,
    pub parent: Option<u64>,
    pub limit: Option<usize>,
}

/// How many entities of a kind are in a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StatusCount {
    pub kind: EntityKind,
    pub status: EntityStatus,
    pub count: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_parse_in_singular_and_plural() {
        assert_eq!("stories".parse(), Ok(EntityKind::Story));
        assert_eq!("Epics".parse(), Ok(EntityKind::Epic));
        assert_eq!("task".parse(), Ok(EntityKind::Task));
        assert!("bug".parse::<EntityKind>().is_err());
    }

    #[test]
    fn completed_work_reopens_only_to_in_progress() {
        use EntityStatus::*;
        assert!(Pending.can_become(Blocked));
        assert!(Blocked.can_become(Completed));
        assert!(Completed.can_become(InProgress));
        assert!(!Completed.can_become(Pending));
        assert!(!Completed.can_become(Blocked));
        assert_eq!("in-progress".parse(), Ok(InProgress));
        assert_eq!("done".parse(), Ok(Completed));
    }

    #[test]
    fn parents_follow_the_hierarchy() {
        assert!(
            EntityKind::Story
                .allowed_parents()
                .contains(&EntityKind::Epic)
        );
        assert!(
            !EntityKind::Story
                .allowed_parents()
                .contains(&EntityKind::Task)
        );
        assert!(EntityKind::Project.allowed_parents().is_empty());
    }
}
