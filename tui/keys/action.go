// Package keys is the action registry of cairn-tui: every bindable action
// with its ID, default keys, help text and hint priority (TUI.md §3.2), the
// user's overrides (§6.3) and the conflict check. Hints, help and routing all
// read it, so they cannot drift apart.
package keys

// ID names an action; it is the key of tui.keys.<ID> in the config file.
type ID string

// The actions of TUI.md §3.2, and the volume transfers.
const (
	Help        ID = "help"
	Messages    ID = "messages"
	Filter      ID = "filter"
	Back        ID = "back"
	QuitOrBack  ID = "quit_or_back"
	Quit        ID = "quit"
	Refresh     ID = "refresh"
	FocusNext   ID = "focus_next"
	FocusPrev   ID = "focus_prev"
	Zoom        ID = "zoom"
	Jump1       ID = "jump_1"
	Jump2       ID = "jump_2"
	Suspend     ID = "suspend"
	Down        ID = "down"
	Up          ID = "up"
	Top         ID = "top"
	Bottom      ID = "bottom"
	HalfDown    ID = "half_down"
	HalfUp      ID = "half_up"
	PageDown    ID = "page_down"
	PageUp      ID = "page_up"
	Open        ID = "open"
	BackNav     ID = "back_nav"
	SortNext    ID = "sort_next"
	SortReverse ID = "sort_reverse"
	CopyName    ID = "copy_name"
	CopyID      ID = "copy_id"
	WsNew       ID = "ws_new"
	WsEdit      ID = "ws_edit"
	WsProvision ID = "ws_provision"
	WsTeardown  ID = "ws_teardown"
	WsDelete    ID = "ws_delete"
	ArtEdit     ID = "art_edit"
	ArtDelete   ID = "art_delete"
	MissingOnly ID = "missing_only"

	Transfers   ID = "transfers"
	Jump3       ID = "jump_3"
	Shell       ID = "shell"
	VolSave     ID = "vol_save"
	Preview     ID = "preview"
	ArtUpload   ID = "art_upload"
	ArtReplace  ID = "art_replace"
	ArtDownload ID = "art_download"
	VolLoad     ID = "vol_load"
	VolUpdate   ID = "vol_update"
	HitNext     ID = "hit_next"
	HitPrev     ID = "hit_prev"
	Wrap        ID = "wrap"
	PvDownload  ID = "preview_download"
	TrCancel    ID = "tr_cancel"
	TrClear     ID = "tr_clear"
)

// Scope says where an action is reachable: everywhere, in every list, or
// on one screen.
type Scope string

const (
	ScopeGlobal     Scope = "global"
	ScopeNav        Scope = "navigation"
	ScopeWorkspaces Scope = "workspaces"
	ScopeArtifacts  Scope = "artifacts"
	// ScopeLists is both workspace screens: the workspaces list and a
	// workspace's artifacts (the shell, saving a volume file).
	ScopeLists     Scope = "workspaces and artifacts"
	ScopePreview   Scope = "preview"
	ScopeTransfers Scope = "transfers"
)

// Scopes lists the scopes in help order.
func Scopes() []Scope {
	return []Scope{ScopeGlobal, ScopeNav, ScopeLists, ScopeWorkspaces, ScopeArtifacts, ScopePreview, ScopeTransfers}
}

// Screens lists the screen scopes with the shared scopes each context adds
// to global and navigation: what the conflict check walks.
func Screens() map[Scope][]Scope {
	return map[Scope][]Scope{
		ScopeWorkspaces: {ScopeLists}, ScopeArtifacts: {ScopeLists},
		ScopePreview: nil, ScopeTransfers: nil,
	}
}

// Action is one bindable action.
type Action struct {
	ID    ID
	Keys  []string
	Short string // the hint word
	Help  string // the help line
	Scope Scope
	// Priority orders hints: higher stays longer; 0 never shows in hints.
	Priority int
	// Mutates marks actions that read-only mode disables and hides.
	Mutates bool
}

// Defaults returns every action with its default keys, in help order.
func Defaults() []Action {
	return []Action{
		{ID: Help, Keys: []string{"?"}, Short: "help", Help: "help overlay", Scope: ScopeGlobal, Priority: 100},
		{ID: Messages, Keys: []string{"!"}, Short: "messages", Help: "messages log", Scope: ScopeGlobal},
		{ID: Back, Keys: []string{"esc"}, Short: "back", Help: "close modal, dismiss error, clear filter, go back", Scope: ScopeGlobal},
		{ID: QuitOrBack, Keys: []string{"q"}, Short: "quit", Help: "back; quit at the root", Scope: ScopeGlobal, Priority: 90},
		{ID: Quit, Keys: []string{"ctrl+c"}, Short: "quit", Help: "quit", Scope: ScopeGlobal},
		{ID: Refresh, Keys: []string{"r", "ctrl+r"}, Short: "refresh", Help: "list again (resync)", Scope: ScopeGlobal, Priority: 20},
		{ID: Jump1, Keys: []string{"1"}, Short: "workspaces", Help: "jump to workspaces", Scope: ScopeGlobal},
		{ID: Jump2, Keys: []string{"2"}, Short: "artifacts", Help: "jump to the current artifacts", Scope: ScopeGlobal},
		{ID: Jump3, Keys: []string{"3"}, Short: "transfers", Help: "jump to the transfers", Scope: ScopeGlobal},
		{ID: Transfers, Keys: []string{"t"}, Short: "transfers", Help: "transfers: every upload and download since start", Scope: ScopeGlobal, Priority: 25},
		{ID: Suspend, Keys: []string{"ctrl+z"}, Short: "suspend", Help: "suspend to the shell; resync on return", Scope: ScopeGlobal},
		{ID: Down, Keys: []string{"j", "down"}, Short: "down", Help: "move down", Scope: ScopeNav},
		{ID: Up, Keys: []string{"k", "up"}, Short: "up", Help: "move up", Scope: ScopeNav},
		{ID: Top, Keys: []string{"g", "home"}, Short: "top", Help: "first row", Scope: ScopeNav},
		{ID: Bottom, Keys: []string{"G", "end"}, Short: "bottom", Help: "last row", Scope: ScopeNav},
		{ID: HalfDown, Keys: []string{"ctrl+d"}, Short: "half down", Help: "half a page down", Scope: ScopeNav},
		{ID: HalfUp, Keys: []string{"ctrl+u"}, Short: "half up", Help: "half a page up", Scope: ScopeNav},
		{ID: PageDown, Keys: []string{"pgdown"}, Short: "page down", Help: "a page down", Scope: ScopeNav},
		{ID: PageUp, Keys: []string{"pgup"}, Short: "page up", Help: "a page up", Scope: ScopeNav},
		{ID: Open, Keys: []string{"enter", "l", "right"}, Short: "open", Help: "drill in", Scope: ScopeNav, Priority: 80},
		{ID: BackNav, Keys: []string{"h", "left"}, Short: "back", Help: "go back", Scope: ScopeNav, Priority: 75},
		{ID: Filter, Keys: []string{"/"}, Short: "filter", Help: "filter by name and description; enter keeps, esc clears", Scope: ScopeNav, Priority: 60},
		{ID: SortNext, Keys: []string{"o"}, Short: "sort", Help: "cycle the sort column", Scope: ScopeNav, Priority: 15},
		{ID: SortReverse, Keys: []string{"O"}, Short: "reverse", Help: "reverse the sort", Scope: ScopeNav},
		{ID: CopyName, Keys: []string{"y"}, Short: "copy", Help: "copy the name (OSC 52; tmux needs set-clipboard on)", Scope: ScopeNav, Priority: 30},
		{ID: CopyID, Keys: []string{"Y"}, Short: "copy ID", Help: "copy the ID", Scope: ScopeNav},
		{ID: FocusNext, Keys: []string{"tab"}, Short: "detail", Help: "focus list ↔ detail", Scope: ScopeNav, Priority: 10},
		{ID: FocusPrev, Keys: []string{"shift+tab"}, Short: "focus back", Help: "focus the previous pane", Scope: ScopeNav},
		{ID: Zoom, Keys: []string{"z"}, Short: "zoom", Help: "zoom the focused pane", Scope: ScopeNav},
		{ID: Shell, Keys: []string{"s"}, Short: "shell", Help: "open a shell in the workspace (volume at /mnt/cairn/ws)", Scope: ScopeLists, Priority: 68, Mutates: true},
		{ID: VolSave, Keys: []string{"i"}, Short: "save from volume", Help: "save a volume file as a new artifact", Scope: ScopeLists, Priority: 35, Mutates: true},
		{ID: WsNew, Keys: []string{"n"}, Short: "new", Help: "new workspace", Scope: ScopeWorkspaces, Priority: 70, Mutates: true},
		{ID: WsEdit, Keys: []string{"e"}, Short: "edit", Help: "rename / describe the workspace", Scope: ScopeWorkspaces, Priority: 65, Mutates: true},
		{ID: WsProvision, Keys: []string{"v"}, Short: "provision", Help: "provision the volume (NONE → READY)", Scope: ScopeWorkspaces, Priority: 50, Mutates: true},
		{ID: WsTeardown, Keys: []string{"V"}, Short: "tear down", Help: "tear down the volume", Scope: ScopeWorkspaces, Priority: 40, Mutates: true},
		{ID: WsDelete, Keys: []string{"D", "delete"}, Short: "delete", Help: "delete the workspace", Scope: ScopeWorkspaces, Priority: 45, Mutates: true},
		{ID: ArtEdit, Keys: []string{"e"}, Short: "edit", Help: "rename / describe the artifact", Scope: ScopeArtifacts, Priority: 65, Mutates: true},
		{ID: ArtDelete, Keys: []string{"D", "delete"}, Short: "delete", Help: "delete the artifact", Scope: ScopeArtifacts, Priority: 45, Mutates: true},
		{ID: MissingOnly, Keys: []string{"m"}, Short: "missing", Help: "toggle missing-only", Scope: ScopeArtifacts, Priority: 55},
		{ID: Preview, Keys: []string{"p"}, Short: "preview", Help: "preview the content (enter too)", Scope: ScopeArtifacts},
		{ID: ArtUpload, Keys: []string{"u"}, Short: "upload", Help: "upload a local file as a new artifact", Scope: ScopeArtifacts, Priority: 70, Mutates: true},
		{ID: ArtReplace, Keys: []string{"U"}, Short: "replace", Help: "replace the content from a local file (repairs MISSING)", Scope: ScopeArtifacts, Priority: 50, Mutates: true},
		{ID: ArtDownload, Keys: []string{"d"}, Short: "download", Help: "download the content to a local file", Scope: ScopeArtifacts, Priority: 67},
		{ID: VolLoad, Keys: []string{"L"}, Short: "load into volume", Help: "write the content to a file of the volume (overwrites it)", Scope: ScopeArtifacts, Priority: 20, Mutates: true},
		{ID: VolUpdate, Keys: []string{"I"}, Short: "update from volume", Help: "replace the content from a volume file (repairs MISSING)", Scope: ScopeArtifacts, Priority: 18, Mutates: true},
		{ID: HitNext, Keys: []string{"n"}, Short: "next hit", Help: "next search hit", Scope: ScopePreview, Priority: 50},
		{ID: HitPrev, Keys: []string{"N"}, Short: "previous hit", Help: "previous search hit", Scope: ScopePreview},
		{ID: Wrap, Keys: []string{"w"}, Short: "wrap", Help: "toggle soft wrap", Scope: ScopePreview, Priority: 40},
		{ID: PvDownload, Keys: []string{"d"}, Short: "download", Help: "download the whole content", Scope: ScopePreview, Priority: 60},
		{ID: TrCancel, Keys: []string{"x"}, Short: "cancel", Help: "cancel the transfer (past 50 % asks first)", Scope: ScopeTransfers, Priority: 70},
		{ID: TrClear, Keys: []string{"c"}, Short: "clear", Help: "clear the finished transfers", Scope: ScopeTransfers, Priority: 50},
	}
}
